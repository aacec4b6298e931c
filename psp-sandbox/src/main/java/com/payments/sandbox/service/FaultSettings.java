package com.payments.sandbox.service;

import com.payments.sandbox.Faults;
import com.payments.sandbox.config.SandboxConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.ThreadLocalRandom;

/** The fault knobs in force: configuration first, changed at runtime through the test API. */
@ApplicationScoped
public class FaultSettings {

    private final SandboxConfig config;
    private volatile Faults current;

    public FaultSettings(SandboxConfig config) {
        this.config = config;
        this.current = fromConfig();
    }

    public Faults current() {
        return current;
    }

    public synchronized Faults update(Faults patch) {
        current = current.merge(patch);
        return current;
    }

    public Faults reset() {
        current = fromConfig();
        return current;
    }

    /** True with probability {@code rate}; no random draw at all when the rate is 0. */
    public static boolean roll(double rate) {
        return rate > 0 && (rate >= 1 || ThreadLocalRandom.current().nextDouble() < rate);
    }

    /** The latency to add to one answer, in milliseconds. */
    public long latencyMs() {
        Faults f = current;
        long fixed = f.latencyFixedMs();
        long spread = f.latencySpreadMs();
        return spread > 0 ? fixed + ThreadLocalRandom.current().nextLong(spread) : fixed;
    }

    private Faults fromConfig() {
        return new Faults(
                config.latency().fixed().toMillis(),
                config.latency().spread().toMillis(),
                config.faults().errorRate(),
                config.faults().timeoutRate(),
                config.faults().notReceivedRate(),
                config.webhook().duplicateRate(),
                config.webhook().reorderRate(),
                config.webhook().dropRate(),
                config.settlement().discrepancies().drop(),
                config.settlement().discrepancies().amountMismatch(),
                config.settlement().discrepancies().phantom(),
                config.faults().rateLimitRate());
    }
}
