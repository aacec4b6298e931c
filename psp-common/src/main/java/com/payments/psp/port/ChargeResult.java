package com.payments.psp.port;

/**
 * What a charge came to.
 *
 * @param status the outcome; {@link Status#NOT_FOUND} only from {@link PspPort#lookUpCharge}
 * @param pspChargeId the PSP's id of the charge (Stripe: the PaymentIntent {@code pi_…}); null when unknown
 * @param declineCode why it was declined (Stripe's {@code decline_code}, else its error {@code code}); null otherwise
 * @param detail for UNKNOWN, what made it unknown ({@code timeout}, {@code http_503}, {@code requires_action}, …)
 * @param needsAttention true when an operator must look (an idempotency key reused with other parameters, a rejected
 *     API key): the caller raises an operations item
 */
public record ChargeResult(
        Status status, String pspChargeId, String declineCode, String detail, boolean needsAttention) {

    public enum Status {
        /** The money was taken. */
        CAPTURED,
        /** The PSP refused; no money moved. */
        DECLINED,
        /** Not known yet; never treat as a decline. */
        UNKNOWN,
        /** The PSP has no charge for the payment and never will for this attempt (lookups only). */
        NOT_FOUND
    }

    public static ChargeResult captured(String pspChargeId) {
        return new ChargeResult(Status.CAPTURED, pspChargeId, null, null, false);
    }

    public static ChargeResult declined(String pspChargeId, String declineCode) {
        return new ChargeResult(Status.DECLINED, pspChargeId, declineCode, null, false);
    }

    public static ChargeResult unknown(String pspChargeId, String detail) {
        return new ChargeResult(Status.UNKNOWN, pspChargeId, null, detail, false);
    }

    public static ChargeResult attention(String pspChargeId, String detail) {
        return new ChargeResult(Status.UNKNOWN, pspChargeId, null, detail, true);
    }

    public static ChargeResult notFound() {
        return new ChargeResult(Status.NOT_FOUND, null, null, null, false);
    }
}
