package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** On {@code payment-events}: the PSP refused the refund; its reservation was released. */
@RegisterForReflection
public record RefundFailed(
        UUID eventId,
        String type,
        UUID refundId,
        UUID paymentId,
        UUID merchantId,
        long amount,
        String currency,
        String failureCode,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "RefundFailed";

    public static RefundFailed of(
            UUID refundId,
            UUID paymentId,
            UUID merchantId,
            long amount,
            String currency,
            String failureCode,
            Map<String, String> metadata) {
        return new RefundFailed(
                UUID.randomUUID(),
                TYPE,
                refundId,
                paymentId,
                merchantId,
                amount,
                currency,
                failureCode,
                Instant.now(),
                metadata);
    }
}
