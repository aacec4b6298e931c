package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * On {@code payment-events}: the PSP authorized a payment of capture method manual (issue 42): the amount is held on the
 * cardholder's account until a capture ({@link PaymentCaptured}), a cancel ({@link PaymentCanceled}) or the expiry
 * ({@link PaymentExpired}). No money moved.
 *
 * @param amount the authorized amount, minor units
 * @param pspReference the PSP's id of the authorization (Stripe: the PaymentIntent)
 */
@RegisterForReflection
public record PaymentAuthorized(
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
    public static final String TYPE = "PaymentAuthorized";

    public static PaymentAuthorized of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String pspReference,
            Map<String, String> metadata) {
        return new PaymentAuthorized(
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
