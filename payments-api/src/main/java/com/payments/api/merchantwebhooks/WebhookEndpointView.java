package com.payments.api.merchantwebhooks;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.vertx.mutiny.sqlclient.Row;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A merchant's webhook endpoint (docs/api.md "Webhook endpoints").
 *
 * @param events the event types it receives, or {@code ["*"]} for all
 * @param status ENABLED, DISABLED (by the delivery service, after failing for days) or DELETED
 * @param disabledReason why the delivery service disabled it (DISABLED only)
 * @param secret the signing secret: only in the answers of the creation and of a rotation
 */
public record WebhookEndpointView(
        UUID id,
        String url,
        List<String> events,
        String status,
        @JsonInclude(JsonInclude.Include.NON_NULL) String disabledReason,
        Instant createdAt,
        @JsonInclude(JsonInclude.Include.NON_NULL) String secret) {
    static final String COLUMNS = "id, url, event_types, status, disabled_reason, created_at";

    static WebhookEndpointView of(Row row) {
        return new WebhookEndpointView(
                row.getUUID("id"),
                row.getString("url"),
                List.of(row.getArrayOfStrings("event_types")),
                row.getString("status"),
                row.getString("disabled_reason"),
                row.getOffsetDateTime("created_at").toInstant(),
                null);
    }

    WebhookEndpointView withSecret(String secret) {
        return new WebhookEndpointView(id, url, events, status, disabledReason, createdAt, secret);
    }
}
