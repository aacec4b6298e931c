package com.payments.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A refund as the merchant API shows it (docs/architecture.md §4). */
@RegisterForReflection
public record RefundView(
        UUID id, UUID paymentId, long amount, String status, Instant createdAt, Map<String, String> metadata) {
    public static RefundView of(Refund r) {
        return new RefundView(r.id(), r.paymentId(), r.amount(), r.status(), r.createdAt(), r.metadata());
    }
}
