package com.payments.api.merchantwebhooks;

import io.vertx.mutiny.sqlclient.Row;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One delivery of an event to an endpoint (docs/api.md "Webhook endpoints").
 *
 * @param eventType the event's type while the event is in the feed (30 days), else null
 * @param origin {@code event} (the event's own delivery) or {@code redeliver}
 * @param status PENDING, SUCCEEDED or FAILED
 * @param nextAttemptAt when the next attempt is due (PENDING only)
 * @param lastAttempt the latest attempt, null before the first
 */
public record DeliveryView(
        UUID id,
        UUID endpointId,
        UUID eventId,
        String eventType,
        String origin,
        String status,
        int attempts,
        Instant nextAttemptAt,
        Instant createdAt,
        DeliveryAttemptView lastAttempt) {
    static final String COLUMNS = "id, endpoint_id, event_id, origin, status, attempts, next_attempt_at, created_at";

    static DeliveryView of(Row row) {
        return new DeliveryView(
                row.getUUID("id"),
                row.getUUID("endpoint_id"),
                row.getUUID("event_id"),
                null,
                row.getString("origin"),
                row.getString("status"),
                row.getInteger("attempts"),
                instant(row.getOffsetDateTime("next_attempt_at")),
                row.getOffsetDateTime("created_at").toInstant(),
                null);
    }

    DeliveryView with(String eventType, DeliveryAttemptView lastAttempt) {
        return new DeliveryView(
                id, endpointId, eventId, eventType, origin, status, attempts, nextAttemptAt, createdAt, lastAttempt);
    }

    static Instant instant(OffsetDateTime at) {
        return at == null ? null : at.toInstant();
    }
}
