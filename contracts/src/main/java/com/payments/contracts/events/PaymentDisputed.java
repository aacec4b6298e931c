package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * On {@code payment-events}: the cardholder disputed a captured payment at the PSP (Stripe's
 * {@code charge.dispute.created}). The disputed money is on hold at the PSP; what happens to it is decided outside this
 * system, and the dispute is also an operations item ({@code payment_disputed}).
 *
 * @param amount the disputed amount, minor units (may be less than the payment's)
 * @param pspReference the PSP's id of the charge (Stripe: the PaymentIntent)
 * @param disputeId the PSP's id of the dispute ({@code dp_…})
 * @param reason the PSP's reason ({@code fraudulent}, {@code product_not_received}, …)
 */
@RegisterForReflection
public record PaymentDisputed(
        UUID eventId,
        String type,
        UUID paymentId,
        UUID merchantId,
        String orderId,
        long amount,
        String currency,
        String pspReference,
        String disputeId,
        String reason,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "PaymentDisputed";

    public static PaymentDisputed of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String pspReference,
            String disputeId,
            String reason,
            Map<String, String> metadata) {
        return new PaymentDisputed(
                UUID.randomUUID(),
                TYPE,
                paymentId,
                merchantId,
                orderId,
                amount,
                currency,
                pspReference,
                disputeId,
                reason,
                Instant.now(),
                metadata);
    }
}
