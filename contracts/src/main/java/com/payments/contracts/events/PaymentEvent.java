package com.payments.contracts.events;

import java.time.Instant;
import java.util.UUID;

/**
 * An event on a Kafka topic: a JSON value with a unique {@code eventId} and a {@code type}. Consumers deduplicate
 * by {@code eventId}; the record key is {@link #paymentId()}.
 */
public sealed interface PaymentEvent
        permits PaymentCaptured, PaymentFailed, RefundRequested, RefundSucceeded, RefundFailed {
    UUID eventId();

    String type();

    UUID paymentId();

    Instant occurredAt();
}
