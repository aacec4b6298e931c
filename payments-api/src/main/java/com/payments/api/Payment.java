package com.payments.api;

import java.time.Instant;
import java.util.UUID;

/** A payment row. Money: {@code amount} and {@code refundedAmount} in minor units of {@code currency}. */
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
        Instant createdAt) {

    /** What can still be refunded: only a captured payment is refundable. */
    public long refundableAmount() {
        return status == PaymentStatus.CAPTURED ? amount - refundedAmount : 0;
    }
}
