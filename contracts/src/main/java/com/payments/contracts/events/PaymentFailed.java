package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** On {@code payment-events}: the PSP declined the payment. */
@RegisterForReflection
public record PaymentFailed(
        UUID eventId,
        String type,
        UUID paymentId,
        UUID merchantId,
        String orderId,
        long amount,
        String currency,
        String declineCode,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "PaymentFailed";

    public static PaymentFailed of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String declineCode,
            Map<String, String> metadata) {
        return new PaymentFailed(
                UUID.randomUUID(),
                TYPE,
                paymentId,
                merchantId,
                orderId,
                amount,
                currency,
                declineCode,
                Instant.now(),
                metadata);
    }
}
