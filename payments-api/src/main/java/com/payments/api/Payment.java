package com.payments.api;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * A payment row ({@code metadata}: the merchant's, {@code {}} when none). Money: {@code amount} and
 * {@code refundedAmount} in minor units of {@code currency}. {@code captureMethod} is AUTOMATIC or MANUAL;
 * {@code capturedAmount} is set only on a MANUAL payment being or having been captured (V98).
 */
public record Payment(
        UUID id,
        UUID merchantId,
        String orderId,
        long amount,
        String currency,
        PaymentStatus status,
        long refundedAmount,
        String pspReference,
        String declineCode,
        Instant createdAt,
        Map<String, String> metadata,
        String captureMethod,
        Long capturedAmount) {

    public static final String AUTOMATIC = "AUTOMATIC";
    public static final String MANUAL = "MANUAL";

    public boolean manual() {
        return MANUAL.equals(captureMethod);
    }

    /** What was (or is being) captured: the whole amount unless a manual capture took less. */
    public long captured() {
        return capturedAmount != null ? capturedAmount : amount;
    }

    /** What can still be refunded: only a captured payment is refundable, up to what was captured. */
    public long refundableAmount() {
        return status == PaymentStatus.CAPTURED ? captured() - refundedAmount : 0;
    }

    /** This payment in another state, with another captured amount. */
    public Payment moved(PaymentStatus to, Long captured) {
        return new Payment(
                id,
                merchantId,
                orderId,
                amount,
                currency,
                to,
                refundedAmount,
                pspReference,
                declineCode,
                createdAt,
                metadata,
                captureMethod,
                captured);
    }
}
