package com.payments.sandbox.service;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The sandbox's notion of "now" for charges, refunds and settlement days. Tests freeze it with
 * {@code PUT /test/clock} to create items at a chosen instant (e.g. 23:58 UTC) and release it with
 * {@code DELETE /test/clock}. Webhook signature timestamps always use the real time.
 */
@ApplicationScoped
public class SandboxClock {

    private volatile Instant fixed;

    /** Now, truncated to milliseconds. */
    public Instant now() {
        Instant f = fixed;
        return f != null ? f : Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }

    public void freeze(Instant instant) {
        fixed = instant.truncatedTo(ChronoUnit.MILLIS);
    }

    public void release() {
        fixed = null;
    }

    public Instant frozenAt() {
        return fixed;
    }
}
