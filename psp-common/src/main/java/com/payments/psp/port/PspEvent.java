package com.payments.psp.port;

import java.time.Instant;

/**
 * A verified PSP webhook event. Receivers deduplicate by {@code eventId} and stay safe when events arrive out of
 * order (a final state is never overwritten).
 *
 * @param paymentId our payment id when the event carries it (Stripe: the PaymentIntent's {@code metadata.payment_id};
 *     a dispute carries only {@code pspChargeId})
 * @param refundId our refund id for refund events ({@code metadata.refund_id})
 * @param pspChargeId the PSP's id of the charge (Stripe: the PaymentIntent)
 * @param pspObjectId the id of the event's object ({@code pi_…}, {@code re_…}, {@code dp_…})
 * @param code the decline code, the refund's failure reason or the dispute's reason
 * @param providerType the PSP's own event type, for logs
 */
public record PspEvent(
        String eventId,
        Type type,
        Instant created,
        String paymentId,
        String refundId,
        String pspChargeId,
        String pspObjectId,
        long amount,
        String currency,
        String code,
        String providerType) {

    public enum Type {
        CHARGE_SUCCEEDED,
        CHARGE_FAILED,
        REFUND_SUCCEEDED,
        REFUND_PENDING,
        REFUND_FAILED,
        DISPUTE_CREATED,
        /** A valid event of a type we do not act on: answer 2xx and drop it. */
        IGNORED
    }
}
