package com.payments.api.console;

import static com.payments.api.console.ConsoleSql.list;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.OffsetDateTime;
import java.util.List;

/** The operations queue pages' reads. Resolving an item goes through OperationsService, not here. */
@ApplicationScoped
public class ConsoleOperationsRepository {
    private static final String ITEM_SELECT =
            """
            SELECT id, subject_type, subject_id, reason, details::text AS details, status, created_at, resolved_at
              FROM operations_queue""";

    private final Pool pool;

    public ConsoleOperationsRepository(Pool pool) {
        this.pool = pool;
    }

    /** An operations item as the console lists it. */
    public record OpsItem(
            long id,
            String subjectType,
            String subjectId,
            String reason,
            String details,
            String status,
            OffsetDateTime createdAt,
            OffsetDateTime resolvedAt) {
        static OpsItem from(Row r) {
            return new OpsItem(
                    r.getLong("id"),
                    r.getString("subject_type"),
                    r.getString("subject_id"),
                    r.getString("reason"),
                    r.getString("details"),
                    r.getString("status"),
                    r.getOffsetDateTime("created_at"),
                    r.getOffsetDateTime("resolved_at"));
        }
    }

    /**
     * A page of items in this status after id {@code after} (keyset), oldest first; reason and subject type filter
     * when not null. Returns up to {@code limit + 1} rows: the extra one tells that a next page exists.
     */
    public Uni<List<OpsItem>> operations(String status, String reason, String subjectType, long after, int limit) {
        return list(
                pool,
                ITEM_SELECT + "\n"
                        + """
                 WHERE status = $1 AND id > $2 AND ($3::text IS NULL OR reason = $3)
                   AND ($4::text IS NULL OR subject_type = $4)
                 ORDER BY id LIMIT $5""",
                Tuple.of(status, after, reason, subjectType, limit + 1),
                OpsItem::from);
    }

    public Uni<OpsItem> operationsItem(long id) {
        return ConsoleSql.first(pool, ITEM_SELECT + " WHERE id = $1", Tuple.of(id), OpsItem::from);
    }

    /** The reasons that have items, for the filter. */
    public Uni<List<String>> operationsReasons() {
        return list(
                pool,
                "SELECT DISTINCT reason FROM operations_queue ORDER BY reason",
                Tuple.tuple(),
                r -> r.getString(0));
    }

    /** An audit row. */
    public record AuditRow(OffsetDateTime at, String operator, String channel, String action, String note) {}

    public Uni<List<AuditRow>> auditOf(String subject) {
        return list(
                pool,
                "SELECT at, operator, channel, action, note FROM operator_audit WHERE subject = $1 ORDER BY id",
                Tuple.of(subject),
                r -> new AuditRow(
                        r.getOffsetDateTime("at"),
                        r.getString("operator"),
                        r.getString("channel"),
                        r.getString("action"),
                        r.getString("note")));
    }
}
