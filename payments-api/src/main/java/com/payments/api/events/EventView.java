package com.payments.api.events;

import com.fasterxml.jackson.annotation.JsonRawValue;
import io.vertx.mutiny.sqlclient.Row;
import java.time.Instant;
import java.util.UUID;

/**
 * One event of the merchant's feed (docs/api.md "Events").
 *
 * @param id the event's id, the {@code eventId} of the payment-events record
 * @param data the event as published on Kafka {@code payment-events} (docs/architecture.md §6)
 */
public record EventView(UUID id, String type, Instant createdAt, @JsonRawValue String data) {
    static final String COLUMNS = "id, type, created_at, payload::text AS payload";

    static EventView of(Row row) {
        return new EventView(
                row.getUUID("id"),
                row.getString("type"),
                row.getOffsetDateTime("created_at").toInstant(),
                row.getString("payload"));
    }
}
