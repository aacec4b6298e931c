package com.payments.api.payment;

import com.payments.api.PaymentStatus;
import java.util.UUID;

/**
 * What is known about a payment at the PSP: the target state, the PSP's charge id (CAPTURED), its decline code
 * (FAILED), or the error that left it UNKNOWN. {@code actor} is recorded in payment_transitions (e.g. "capture",
 * "resolver", "webhook").
 */
public record PaymentOutcome(
        UUID paymentId, PaymentStatus status, String pspReference, String declineCode, String lastError, String actor) {

    public static PaymentOutcome captured(UUID paymentId, String pspReference, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.CAPTURED, pspReference, null, null, actor);
    }

    public static PaymentOutcome failed(UUID paymentId, String pspReference, String declineCode, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.FAILED, pspReference, declineCode, null, actor);
    }

    public static PaymentOutcome unknown(UUID paymentId, String lastError, String actor) {
        return unknown(paymentId, null, lastError, actor);
    }

    /** Unknown, with the PSP's id of the charge when its answer named one (Stripe's {@code requires_action}). */
    public static PaymentOutcome unknown(UUID paymentId, String pspReference, String lastError, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.UNKNOWN, pspReference, null, lastError, actor);
    }

    /**
     * Still unknown for a manual payment whose PSP call is pending: it stays in {@code pending} (AUTHORIZING,
     * CAPTURING, CANCELING or EXPIRING), with the error, for the resolver.
     */
    public static PaymentOutcome pending(UUID paymentId, PaymentStatus pending, String lastError, String actor) {
        return new PaymentOutcome(paymentId, pending, null, null, lastError, actor);
    }

    /** A manual payment's authorization succeeded: the PSP holds the money under {@code pspReference}. */
    public static PaymentOutcome authorized(UUID paymentId, String pspReference, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.AUTHORIZED, pspReference, null, null, actor);
    }

    /** A manual payment's authorization was voided at the PSP (the merchant's cancel). */
    public static PaymentOutcome canceled(UUID paymentId, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.CANCELED, null, null, null, actor);
    }

    /** A manual payment's authorization was voided by its expiry, or the PSP had let it expire. */
    public static PaymentOutcome expired(UUID paymentId, String actor) {
        return new PaymentOutcome(paymentId, PaymentStatus.EXPIRED, null, null, null, actor);
    }
}
