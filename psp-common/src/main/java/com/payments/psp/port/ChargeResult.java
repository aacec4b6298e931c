package com.payments.psp.port;

/**
 * What a charge, an authorization, a capture or a void came to (and what a look-up found).
 *
 * @param status the outcome; {@link Status#NOT_FOUND} only from {@link PspPort#lookUpCharge}; {@link Status#NOT_SENT}
 *     when the call itself never reached the PSP
 * @param pspChargeId the PSP's id of the charge (Stripe: the PaymentIntent {@code pi_…}); null when unknown
 * @param declineCode why it was declined (Stripe's {@code decline_code}, else its error {@code code}; a refused capture
 *     or void one of the codes below, {@link #AUTHORIZATION_CANCELED} to {@link #NOT_AUTHORIZED}); null otherwise
 * @param detail for UNKNOWN, what made it unknown ({@code timeout}, {@code http_503}, {@code requires_action}, …); for
 *     NOT_SENT, {@link #CONNECT_FAILED}; for CANCELED, why ({@link #EXPIRED} or {@link #VOIDED})
 * @param needsAttention true when an operator must look (an idempotency key reused with other parameters, a rejected
 *     API key): the caller raises an operations item
 * @param amount the charge's amount as the PSP reports it (minor units), null when the answer does not say: the
 *     resolver compares it with the payment's before recording a looked-up charge. Of a CAPTURED authorization it is
 *     the captured amount; of an AUTHORIZED one the authorized amount
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

    /** The {@link #detail()} of a {@link Status#NOT_SENT} result: the call's first connection could not be made. */
    public static final String CONNECT_FAILED = "connect_failed";

    /** The {@link #detail()} of a {@link Status#CANCELED} authorization that the PSP let expire uncaptured. */
    public static final String EXPIRED = "expired";

    /** The {@link #detail()} of a {@link Status#CANCELED} authorization that was voided. */
    public static final String VOIDED = "canceled";

    /** Declined capture: the authorization was voided; nothing was captured. */
    public static final String AUTHORIZATION_CANCELED = "authorization_canceled";

    /** Declined capture: the authorization expired uncaptured; nothing was captured. */
    public static final String AUTHORIZATION_EXPIRED = "authorization_expired";

    /** Declined capture: more than the authorized amount was asked; nothing was captured. */
    public static final String AMOUNT_EXCEEDS_AUTHORIZED = "amount_exceeds_authorized";

    /**
     * Declined capture or void: the authorization was already captured (by another request); this request captured
     * or released nothing. A look-up tells the captured amount.
     */
    public static final String ALREADY_CAPTURED = "already_captured";

    /** Declined capture or void: the PSP's charge is no authorization (a declined or automatically captured charge). */
    public static final String NOT_AUTHORIZED = "not_an_authorization";

    public enum Status {
        /** The money was taken (of an authorization: captured, {@link #amount()} is the captured amount). */
        CAPTURED,
        /** The money is held at the PSP, not taken: an authorization not captured yet. */
        AUTHORIZED,
        /**
         * An authorization that was voided or expired at the PSP ({@link #detail()} says which): nothing was taken and
         * nothing can be captured any more.
         */
        CANCELED,
        /** The PSP refused; no money moved. */
        DECLINED,
        /** Not known yet; never treat as a decline. */
        UNKNOWN,
        /** The PSP has no charge for the payment and never will for this attempt (lookups only). */
        NOT_FOUND,
        /**
         * This call never reached the PSP: the first connection of its first attempt could not be made (an adapter's
         * {@link com.payments.psp.NeverSentException}), so this call charged nothing and a capture may drop the
         * payment and give the merchant's key back. Never after an attempt that may have been written: a resend or
         * retry that cannot connect is UNKNOWN. Of a look-up, it says nothing about the charge.
         */
        NOT_SENT
    }

    public static ChargeResult captured(String pspChargeId) {
        return new ChargeResult(Status.CAPTURED, pspChargeId, null, null, false, null, null);
    }

    public static ChargeResult authorized(String pspChargeId) {
        return new ChargeResult(Status.AUTHORIZED, pspChargeId, null, null, false, null, null);
    }

    /** @param reason {@link #EXPIRED} or {@link #VOIDED} */
    public static ChargeResult canceled(String pspChargeId, String reason) {
        return new ChargeResult(Status.CANCELED, pspChargeId, null, reason, false, null, null);
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

    public static ChargeResult notSent() {
        return new ChargeResult(Status.NOT_SENT, null, null, CONNECT_FAILED, false, null, null);
    }

    /** This result with the charge's amount and currency as the PSP reported them. */
    public ChargeResult withMoney(Long amount, String currency) {
        return new ChargeResult(status, pspChargeId, declineCode, detail, needsAttention, amount, currency);
    }

    /** True when this call never reached the PSP ({@link Status#NOT_SENT}). */
    public boolean neverSent() {
        return status == Status.NOT_SENT;
    }
}
