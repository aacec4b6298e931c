package com.payments.api.client;

/**
 * The PSP refused the request in a way only an operator can settle (Stripe: the idempotency key was used with other
 * parameters, or the API key was rejected): the outcome is unknown, never a decline, and the payment gets the
 * operations item {@code psp_charge_needs_attention} (docs/resolver.md). Counts as a failure, like its parent.
 */
public class PspAttentionException extends PspUnavailableException {
    private final String detail;
    private final String pspChargeId;

    public PspAttentionException(String detail, String pspChargeId) {
        super("PSP needs an operator: " + detail);
        this.detail = detail;
        this.pspChargeId = pspChargeId;
    }

    /** What the PSP said ({@code idempotency_error}, {@code http_401}, …). */
    public String detail() {
        return detail;
    }

    /** The PSP's id of the charge if the answer named one, else null. */
    public String pspChargeId() {
        return pspChargeId;
    }
}
