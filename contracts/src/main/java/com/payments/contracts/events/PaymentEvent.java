package com.payments.contracts.events;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * An event on a Kafka topic: a JSON value with a unique {@code eventId} and a {@code type}. Consumers deduplicate
 * by {@code eventId}; the record key is {@link #paymentId()}.
 */
public sealed interface PaymentEvent
        permits PaymentAuthorized,
                PaymentCaptured,
                PaymentCanceled,
                PaymentExpired,
                PaymentFailed,
                PaymentDisputed,
                RefundRequested,
                RefundSucceeded,
                RefundFailed {
    UUID eventId();

    String type();

    UUID paymentId();

    Instant occurredAt();

    /**
     * The merchant's metadata of the payment (payment events) or of the refund (refund events), {@code {}} when it has
     * none. Added later (issue 24): events written before carry no such field, and a reader gets null for them, to be
     * read as none.
     */
    Map<String, String> metadata();
}
