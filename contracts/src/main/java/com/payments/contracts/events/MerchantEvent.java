package com.payments.contracts.events;

import com.fasterxml.jackson.annotation.JsonRawValue;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;

/**
 * One event of a merchant's feed ({@code merchant_events}), in the one shape merchants see it: the body of
 * {@code GET /v1/events/{id}} (payments-api) and of every webhook (webhook-delivery). docs/api.md "Events".
 *
 * @param id the event's id, the {@code eventId} of the payment-events record
 * @param version the payment's version: 1 for its first event, +1 for each later one (refund events included); a
 *     receiver keeps the highest version per payment and drops an event with a lower one (webhooks arrive in any order)
 * @param payment the payment's state when the event was written, {@code {"id","status","amount","currency",
 *     "refundedAmount"}}, as PostgreSQL prints the stored jsonb; null for events written before V93, and for an event
 *     whose payment row was gone
 * @param data the event as published on Kafka {@code payment-events} (docs/architecture.md §6), as PostgreSQL prints
 *     the stored jsonb
 */
@RegisterForReflection
public record MerchantEvent(
        UUID id,
        String type,
        Instant createdAt,
        long version,
        @JsonRawValue String payment,
        @JsonRawValue String data) {

    /**
     * The types of docs/architecture.md §6 that reach merchants: the feed's {@code ?type=} filter, the types an endpoint
     * may subscribe to, and what webhook-delivery fans out. (RefundRequested is internal.)
     */
    public static final Set<String> TYPES = Set.of(
            PaymentCaptured.TYPE,
            PaymentFailed.TYPE,
            PaymentDisputed.TYPE,
            PaymentAuthorized.TYPE,
            PaymentCanceled.TYPE,
            PaymentExpired.TYPE,
            RefundSucceeded.TYPE,
            RefundFailed.TYPE);
}
