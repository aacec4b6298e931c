package com.payments.api;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A refund row (created by the refunds flow; read here). */
public record Refund(
        UUID id,
        UUID paymentId,
        long amount,
        String currency,
        String status,
        Instant createdAt,
        Map<String, String> metadata) {}
