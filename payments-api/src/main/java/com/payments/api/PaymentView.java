package com.payments.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The payment as the merchant API shows it (docs/architecture.md §4). {@code refunds} is left out of list answers.
 * {@code captureMethod} and {@code capturedAmount} only on a manual payment (the latter once it is being or has been
 * captured): an automatic payment reads byte for byte as before API 1.9.0, so that a key answered by the previous
 * release during a roll replays the same bytes through this one.
 */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({
    "id",
    "orderId",
    "amount",
    "currency",
    "status",
    "captureMethod",
    "capturedAmount",
    "declineCode",
    "refundedAmount",
    "refundableAmount",
    "pspReference",
    "createdAt",
    "metadata",
    "refunds"
})
public record PaymentView(
        UUID id,
        String orderId,
        long amount,
        String currency,
        PaymentStatus status,
        String captureMethod,
        Long capturedAmount,
        String declineCode,
        long refundedAmount,
        long refundableAmount,
        String pspReference,
        Instant createdAt,
        Map<String, String> metadata,
        List<RefundView> refunds) {

    public static PaymentView of(Payment p, List<RefundView> refunds) {
        return new PaymentView(
                p.id(),
                p.orderId(),
                p.amount(),
                p.currency(),
                p.status(),
                Payment.MANUAL.equals(p.captureMethod()) ? "manual" : null,
                p.capturedAmount(),
                p.declineCode(),
                p.refundedAmount(),
                p.refundableAmount(),
                p.pspReference(),
                p.createdAt(),
                p.metadata(),
                refunds);
    }
}
