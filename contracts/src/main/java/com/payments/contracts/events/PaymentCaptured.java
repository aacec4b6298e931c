package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** On {@code payment-events}: the PSP captured the payment. */
@RegisterForReflection
public record PaymentCaptured(
        UUID eventId,
        String type,
        UUID paymentId,
        UUID merchantId,
        String orderId,
        long amount,
        String currency,
        String pspReference,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "PaymentCaptured";

    public static PaymentCaptured of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String pspReference,
            Map<String, String> metadata) {
        return new PaymentCaptured(
                UUID.randomUUID(),
                TYPE,
                paymentId,
                merchantId,
                orderId,
                amount,
                currency,
                pspReference,
                Instant.now(),
                metadata);
    }
}
