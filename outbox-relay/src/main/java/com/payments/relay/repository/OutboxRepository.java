package com.payments.relay.repository;

import com.payments.relay.OutboxRow;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** SQL of the relay on the {@code outbox} table. */
public final class OutboxRepository {

    /** Unsent rows and the age in seconds of the oldest one (0 when none). */
    public record Backlog(long unsent, double oldestAgeSeconds) {}

    /**
     * Oldest unsent rows first: id order is commit order per key (migration V10). Marks {@code toMark} sent in the same
     * statement (rows published and acknowledged), and skips them and {@code publishing}, rows already published whose
     * mark is still running. (The read does not see the statement's own update: one snapshot.)
     */
    public Uni<List<OutboxRow>> unsent(SqlClient client, int limit, List<Long> publishing, List<Long> toMark) {
        List<Long> skip = new ArrayList<>(publishing);
        skip.addAll(toMark);
        return client.preparedQuery(
                        """
                        WITH marked AS (UPDATE outbox SET sent_at = now() WHERE id = ANY($3) AND sent_at IS NULL)
                        SELECT id, event_id, event_type, topic, key, payload::text AS payload, headers
                        FROM outbox
                        WHERE sent_at IS NULL AND id NOT IN (SELECT unnest($2::bigint[]))
                        ORDER BY id
                        LIMIT $1""")
                .execute(Tuple.of(limit, skip.toArray(Long[]::new), toMark.toArray(Long[]::new)))
                .map(OutboxRepository::rows);
    }

    /**
     * Clears V60's sleeping flag, which only a previous release's publisher sets (V100: the fence lock says it now),
     * so that a flag left set by one that died asleep no longer makes writers notify. Writes only when it is set.
     */
    public Uni<Void> clearSleepingFlag(SqlClient client) {
        return client.query("UPDATE outbox_relay_state SET sleeping = false WHERE sleeping")
                .execute()
                .replaceWithVoid();
    }

    public Uni<Boolean> hasUnsent(SqlClient client) {
        return client.preparedQuery("SELECT EXISTS (SELECT 1 FROM outbox WHERE sent_at IS NULL) AS pending")
                .execute()
                .map(rows -> rows.iterator().next().getBoolean("pending"));
    }

    public Uni<Integer> markSent(SqlClient client, List<Long> ids) {
        return client.preparedQuery("UPDATE outbox SET sent_at = now() WHERE id = ANY($1) AND sent_at IS NULL")
                .execute(Tuple.of(ids.toArray(Long[]::new)))
                .map(RowSet::rowCount);
    }

    /** Deletes at most {@code limit} rows published longer than {@code retention} ago; returns how many. */
    public Uni<Integer> deletePublishedBefore(SqlClient client, Duration retention, int limit) {
        return client.preparedQuery(
                        """
                        DELETE FROM outbox
                        WHERE id IN (SELECT id FROM outbox
                                     WHERE sent_at < now() - make_interval(secs => $1)
                                     ORDER BY sent_at
                                     LIMIT $2)""")
                .execute(Tuple.of(retention.toMillis() / 1000.0, limit))
                .map(RowSet::rowCount);
    }

    public Uni<Backlog> backlog(SqlClient client) {
        return client.query(
                        """
                        SELECT count(*) AS unsent,
                               coalesce(extract(epoch FROM clock_timestamp() - min(created_at)), 0)::float8 AS age
                        FROM outbox WHERE sent_at IS NULL""")
                .execute()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return new Backlog(row.getLong("unsent"), Math.max(0, row.getDouble("age")));
                });
    }

    private static List<OutboxRow> rows(RowSet<Row> rows) {
        List<OutboxRow> result = new ArrayList<>(rows.size());
        for (Row row : rows) {
            result.add(new OutboxRow(
                    row.getLong("id"),
                    row.getUUID("event_id"),
                    row.getString("event_type"),
                    row.getString("topic"),
                    row.getString("key"),
                    row.getString("payload"),
                    row.getJsonObject("headers")));
        }
        return result;
    }
}
