package com.payments.api.merchantwebhooks;

import io.vertx.mutiny.sqlclient.Row;
import java.time.Instant;

/**
 * One attempt of a delivery, as it ended.
 *
 * @param responseCode the receiver's HTTP status; null when no answer came (refused, timeout, connection error)
 * @param outcome SUCCEEDED or FAILED
 * @param nextAttemptAt when the attempt after it was scheduled; null after the last
 */
public record DeliveryAttemptView(
        int attempt,
        Instant startedAt,
        int latencyMs,
        Integer responseCode,
        String outcome,
        String error,
        Instant nextAttemptAt) {

    /** The attempt in a row of the deliveries' details; null when the row has none. */
    static DeliveryAttemptView of(Row row) {
        Integer attempt = row.getInteger("attempt");
        if (attempt == null) {
            return null;
        }
        return new DeliveryAttemptView(
                attempt,
                row.getOffsetDateTime("started_at").toInstant(),
                row.getInteger("latency_ms"),
                row.getInteger("response_code"),
                row.getString("outcome"),
                row.getString("error"),
                DeliveryView.instant(row.getOffsetDateTime("next_attempt_at")));
    }
}
