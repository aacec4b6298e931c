package com.payments.api;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A payment row ({@code metadata}: the merchant's, {@code {}} when none). Money: {@code amount} and {@code refundedAmount} in minor units of {@code currency}. */
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
        Map<String, String> metadata) {

    /** What can still be refunded: only a captured payment is refundable. */
    public long refundableAmount() {
        return status == PaymentStatus.CAPTURED ? amount - refundedAmount : 0;
    }
}
