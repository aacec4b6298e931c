package com.payments.refunds.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.UUID;

/** {@code consumed_events}: which events a consumer has applied. */
@ApplicationScoped
public class ConsumedEventRepository {

    public Uni<Boolean> seen(SqlClient client, String consumer, UUID eventId) {
        return client.preparedQuery("SELECT 1 FROM consumed_events WHERE consumer = $1 AND event_id = $2")
                .execute(Tuple.of(consumer, eventId))
                .map(rows -> rows.size() > 0);
    }

    /** Records the event as applied; false when it already was (another delivery got there first). */
    public Uni<Boolean> record(SqlClient client, String consumer, UUID eventId) {
        return client.preparedQuery(
                        "INSERT INTO consumed_events (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .execute(Tuple.of(consumer, eventId))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Deletes at most {@code limit} of this consumer's event ids applied before the retention; returns how many. */
    public Uni<Integer> deleteOlderThan(SqlClient client, String consumer, Duration retention, int limit) {
        return client.preparedQuery(
                        """
                        DELETE FROM consumed_events WHERE ctid = ANY (ARRAY(
                            SELECT ctid FROM consumed_events
                             WHERE consumer = $1 AND consumed_at < now() - make_interval(secs => $2)
                             LIMIT $3 FOR UPDATE SKIP LOCKED))""")
                .execute(Tuple.of(consumer, (double) retention.toSeconds(), limit))
                .map(rows -> rows.rowCount());
    }
}
