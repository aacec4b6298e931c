package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * On {@code payment-events}: an authorization not captured in time was voided at the PSP: nothing was captured, the held
 * amount is released (issue 42).
 *
 * @param amount the amount that was authorized and is released, minor units
 * @param pspReference the PSP's id of the authorization (Stripe: the PaymentIntent)
 */
@RegisterForReflection
public record PaymentExpired(
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
    public static final String TYPE = "PaymentExpired";

    public static PaymentExpired of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String pspReference,
            Map<String, String> metadata) {
        return new PaymentExpired(
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
