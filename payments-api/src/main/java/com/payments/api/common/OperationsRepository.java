package com.payments.api.common;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/** Items for humans in operations_queue: at most one OPEN item per subject and reason (unique index of V1). */
@ApplicationScoped
public class OperationsRepository {

    /** Opens an item unless one is already open for this subject and reason; true when this call opened it. */
    public Uni<Boolean> open(
            SqlClient client, String subjectType, String subjectId, String reason, String detailsJson) {
        return client.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                        VALUES ($1, $2, $3, $4::text::jsonb)
                        ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING""")
                .execute(Tuple.of(subjectType, subjectId, reason, detailsJson))
                .map(rows -> rows.rowCount() == 1);
    }

    /**
     * Resolves the open item for this subject and reason, if there is one, noting what answered it in its details;
     * true when there was one.
     */
    public Uni<Boolean> resolve(
            SqlClient client, String subjectType, String subjectId, String reason, String resolution) {
        return client.preparedQuery(
                        """
                        UPDATE operations_queue
                           SET status = 'RESOLVED', resolved_at = now(),
                               details = details || jsonb_build_object('resolution', $4::text)
                         WHERE subject_type = $1 AND subject_id = $2 AND reason = $3 AND status = 'OPEN'""")
                .execute(Tuple.of(subjectType, subjectId, reason, resolution))
                .map(rows -> rows.rowCount() == 1);
    }

    /** An item as operators see it; {@code detailsJson} is the stored jsonb as text. */
    public record Item(
            long id,
            String subjectType,
            String subjectId,
            String reason,
            String detailsJson,
            String status,
            OffsetDateTime createdAt,
            OffsetDateTime resolvedAt) {}

    private static final String ITEM_COLUMNS =
            "id, subject_type, subject_id, reason, details::text AS details, status, created_at, resolved_at";

    /** Items in this status, oldest first. */
    public Uni<List<Item>> list(SqlClient client, String status, int limit) {
        return client.preparedQuery("SELECT " + ITEM_COLUMNS
                        + " FROM operations_queue WHERE status = $1 ORDER BY created_at, id LIMIT $2")
                .execute(Tuple.of(status, limit))
                .map(rows -> {
                    List<Item> items = new ArrayList<>();
                    rows.forEach(row -> items.add(item(row)));
                    return items;
                });
    }

    public Uni<Item> find(SqlClient client, long id) {
        return client.preparedQuery("SELECT " + ITEM_COLUMNS + " FROM operations_queue WHERE id = $1")
                .execute(Tuple.of(id))
                .map(rows -> rows.rowCount() == 0 ? null : item(rows.iterator().next()));
    }

    /** Resolves an OPEN item by id with an operator's note; null when there is no such OPEN item. */
    public Uni<Item> resolve(SqlClient client, long id, String resolution) {
        return client.preparedQuery(
                        """
                        UPDATE operations_queue
                           SET status = 'RESOLVED', resolved_at = now(),
                               details = details || jsonb_build_object('resolution', $2::text)
                         WHERE id = $1 AND status = 'OPEN'
                        RETURNING %s"""
                                .formatted(ITEM_COLUMNS))
                .execute(Tuple.of(id, resolution))
                .map(rows -> rows.rowCount() == 0 ? null : item(rows.iterator().next()));
    }

    private static Item item(Row row) {
        return new Item(
                row.getLong("id"),
                row.getString("subject_type"),
                row.getString("subject_id"),
                row.getString("reason"),
                row.getString("details"),
                row.getString("status"),
                row.getOffsetDateTime("created_at"),
                row.getOffsetDateTime("resolved_at"));
    }
}
