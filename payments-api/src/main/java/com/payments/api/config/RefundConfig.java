package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration of the refund reservation ({@code refunds.*}). */
@ConfigMapping(prefix = "refunds")
public interface RefundConfig {

    /**
     * Retry-After (seconds) on the 409 {@code payment_outcome_pending}: the payment's outcome at the PSP is not known
     * yet (UNKNOWN or PROCESSING), so it cannot be refunded until the resolver settles it.
     */
    @WithDefault("5")
    int outcomePendingRetryAfterSeconds();

    /**
     * Reservation statements one instance runs at a time. Reservations that arrive while all run wait and go
     * together in the next one, one row each (as captures do: {@code payments.capture.statements-in-flight}). Each
     * uses a connection of the pool while it runs.
     */
    @WithDefault("1")
    int reservationStatementsInFlight();

    /** Reservations in one statement at most. */
    @WithDefault("32")
    int reservationMaxBatchSize();
}
