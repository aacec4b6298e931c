package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** On {@code payment-events}: the PSP refunded the money. */
@RegisterForReflection
public record RefundSucceeded(
        UUID eventId,
        String type,
        UUID refundId,
        UUID paymentId,
        UUID merchantId,
        long amount,
        String currency,
        String pspReference,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "RefundSucceeded";

    public static RefundSucceeded of(
            UUID refundId,
            UUID paymentId,
            UUID merchantId,
            long amount,
            String currency,
            String pspReference,
            Map<String, String> metadata) {
        return new RefundSucceeded(
                UUID.randomUUID(),
                TYPE,
                refundId,
                paymentId,
                merchantId,
                amount,
                currency,
                pspReference,
                Instant.now(),
                metadata);
    }
}
