package com.payments.api.client;

/**
 * The PSP holds the charge but has not finished it (Stripe's {@code requires_action}, {@code processing}): the outcome
 * is unknown, for the resolver, but the PSP answered, so it is no PSP failure and the circuit breakers skip it. The
 * PSP's id of the charge is kept as the payment's PSP reference, so that the resolver can look it up by id.
 */
public class PspChargePendingException extends RuntimeException {
    private final String pspChargeId;

    public PspChargePendingException(String pspChargeId, String message) {
        super(message, null, false, false);
        this.pspChargeId = pspChargeId;
    }

    /** The PSP's id of the charge ({@code pi_…}). */
    public String pspChargeId() {
        return pspChargeId;
    }
}
