package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** On {@code refund-commands}: a refund was reserved and must be executed at the PSP by refunds-worker. */
@RegisterForReflection
public record RefundRequested(
        UUID eventId,
        String type,
        UUID refundId,
        UUID paymentId,
        UUID merchantId,
        long amount,
        String currency,
        String pspChargeReference,
        Instant occurredAt,
        Map<String, String> metadata)
        implements PaymentEvent {
    public static final String TYPE = "RefundRequested";

    public static RefundRequested of(
            UUID refundId,
            UUID paymentId,
            UUID merchantId,
            long amount,
            String currency,
            String pspChargeReference,
            Map<String, String> metadata) {
        return new RefundRequested(
                UUID.randomUUID(),
                TYPE,
                refundId,
                paymentId,
                merchantId,
                amount,
                currency,
                pspChargeReference,
                Instant.now(),
                metadata);
    }
}
