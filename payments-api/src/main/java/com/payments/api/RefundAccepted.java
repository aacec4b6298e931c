package com.payments.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Map;
import java.util.UUID;

/** The 202 answer of {@code POST /v1/payments/{id}/refunds} (docs/architecture.md §4): the refund is reserved, not yet paid. */
@RegisterForReflection
public record RefundAccepted(UUID refundId, UUID paymentId, long amount, String status, Map<String, String> metadata) {}
