package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * On {@code payment-events}: the PSP captured the payment.
 *
 * @param amount the payment's amount (for a manual capture: the authorized amount), as in every payment event
 * @param capturedAmount what was captured, minor units: the whole {@code amount} for an automatic capture, at most it
 *     for a manual one (the rest of the authorization released). Added with manual capture (issue 42): events written
 *     before carry none, and a reader gets null for them, to be read as {@code amount}. Money moved is this, not {@code
 *     amount}
 */
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
        Map<String, String> metadata,
        Long capturedAmount)
        implements PaymentEvent {
    public static final String TYPE = "PaymentCaptured";

    /** An automatic capture: the whole amount captured. */
    public static PaymentCaptured of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String pspReference,
            Map<String, String> metadata) {
        return of(paymentId, merchantId, orderId, amount, amount, currency, pspReference, metadata);
    }

    /** A capture of {@code capturedAmount} of the payment's {@code amount}. */
    public static PaymentCaptured of(
            UUID paymentId,
            UUID merchantId,
            String orderId,
            long amount,
            long capturedAmount,
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
                metadata,
                capturedAmount);
    }
}
