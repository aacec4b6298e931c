package com.payments.refunds.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.UUID;

/** {@code refund_dead_letters}: the refund-commands records sent to the dead-letter topic (the console's DLQ). */
@ApplicationScoped
public class DeadLetterRepository {
    private static final int MAX_REASON = 1000;

    /** A record about to be dead-lettered; {@code refundId} and {@code paymentId} null when it does not parse. */
    public record DeadLetter(
            String topic, int partition, long offset, String key, UUID refundId, UUID paymentId, String reason) {}

    /**
     * Records it once per source record: a redelivered record that was recorded before adds nothing. Key and reason
     * come from the record, so they are cut to what the table's checks allow (and PostgreSQL text has no NUL).
     */
    public Uni<Void> record(SqlClient client, DeadLetter letter) {
        String reason = letter.reason() == null ? "" : letter.reason().replace('\0', '?');
        reason = reason.isBlank() ? "unknown" : reason;
        String key = letter.key() == null ? null : letter.key().replace('\0', '?');
        return client.preparedQuery(
                        """
                        INSERT INTO refund_dead_letters
                               (topic, kafka_partition, kafka_offset, record_key, refund_id, payment_id, reason)
                        VALUES ($1, $2, $3, $4, $5, $6, $7)
                        ON CONFLICT (topic, kafka_partition, kafka_offset) DO NOTHING""")
                .execute(Tuple.from(Arrays.asList(
                        letter.topic(),
                        letter.partition(),
                        letter.offset(),
                        key == null || key.length() > 255 ? null : key,
                        letter.refundId(),
                        letter.paymentId(),
                        reason.length() > MAX_REASON ? reason.substring(0, MAX_REASON) : reason)))
                .replaceWithVoid();
    }
}
