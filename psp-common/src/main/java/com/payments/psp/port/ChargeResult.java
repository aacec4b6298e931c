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
 * @param amount the charge's amount as the PSP reports it (minor units), null when the answer does not say: the
 *     resolver compares it with the payment's before recording a looked-up charge
 * @param currency the charge's currency as the PSP reports it (ISO 4217, upper case), null when the answer does not say
 */
public record ChargeResult(
        Status status,
        String pspChargeId,
        String declineCode,
        String detail,
        boolean needsAttention,
        Long amount,
        String currency) {

    /**
     * The {@link #detail()} of an UNKNOWN result whose request never reached the PSP (no connection could be made):
     * nothing was charged, so a capture may drop the payment and give the merchant's key back.
     */
    public static final String CONNECT_FAILED = "connect_failed";

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
        return new ChargeResult(Status.CAPTURED, pspChargeId, null, null, false, null, null);
    }

    public static ChargeResult declined(String pspChargeId, String declineCode) {
        return new ChargeResult(Status.DECLINED, pspChargeId, declineCode, null, false, null, null);
    }

    public static ChargeResult unknown(String pspChargeId, String detail) {
        return new ChargeResult(Status.UNKNOWN, pspChargeId, null, detail, false, null, null);
    }

    public static ChargeResult attention(String pspChargeId, String detail) {
        return new ChargeResult(Status.UNKNOWN, pspChargeId, null, detail, true, null, null);
    }

    public static ChargeResult notFound() {
        return new ChargeResult(Status.NOT_FOUND, null, null, null, false, null, null);
    }

    /** This result with the charge's amount and currency as the PSP reported them. */
    public ChargeResult withMoney(Long amount, String currency) {
        return new ChargeResult(status, pspChargeId, declineCode, detail, needsAttention, amount, currency);
    }

    /** True when the request never reached the PSP ({@link #CONNECT_FAILED}). */
    public boolean neverSent() {
        return status == Status.UNKNOWN && CONNECT_FAILED.equals(detail);
    }
}
