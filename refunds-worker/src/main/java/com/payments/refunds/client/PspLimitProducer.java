package com.payments.refunds.client;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspLimitSettings;
import com.payments.refunds.config.RefundsConfig;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Duration;

/**
 * The instance's one limit of concurrent PSP calls (psp-common's AIMD limit: cut by timeouts and PSP errors only), from
 * {@code refunds.psp-limit.*}.
 */
public class PspLimitProducer {

    /**
     * Calls over the limit wait until the PSP call's own timeout ({@code @Timeout} on {@link PspClient}, which
     * includes the wait) ends them; at most twice the ceiling wait. The consumer admits records by the limit, so that
     * wait stays short.
     */
    @Produces
    @Singleton
    PspConcurrencyLimit pspConcurrencyLimit(RefundsConfig config, MeterRegistry registry) {
        RefundsConfig.PspLimit limit = config.pspLimit();
        return new PspConcurrencyLimit(
                new PspLimitSettings(limit.initial(), limit.min(), limit.max(), 2 * limit.max(), Duration.ofMinutes(1)),
                registry,
                "refunds.psp");
    }
}
