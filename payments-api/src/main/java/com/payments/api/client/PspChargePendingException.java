package com.payments.api.client;

/**
 * The PSP holds the charge but has not finished it (Stripe's {@code requires_action}, {@code processing}): the outcome
 * is unknown, for the resolver, but the PSP answered, so it is no PSP failure and the circuit breakers skip it.
 */
public class PspChargePendingException extends RuntimeException {
    public PspChargePendingException(String message) {
        super(message, null, false, false);
    }
}
