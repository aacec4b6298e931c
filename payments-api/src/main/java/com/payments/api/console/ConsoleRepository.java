package com.payments.api.console;

import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/** The console's reads. Nothing here writes: the console changes nothing but operations items (OperationsService). */
@ApplicationScoped
public class ConsoleRepository {
    private final Pool pool;

    public ConsoleRepository(Pool pool) {
        this.pool = pool;
    }

    // --- live state -----------------------------------------------------------------------------------------------

    /** Open operations items per reason: how many, the oldest. */
    public record OpenByReason(String reason, long count, OffsetDateTime oldest) {}

    public Uni<List<OpenByReason>> openByReason() {
        return list(
                """
                SELECT reason, count(*) AS n, min(created_at) AS oldest FROM operations_queue
                 WHERE status = 'OPEN' GROUP BY reason ORDER BY min(created_at)""",
                Tuple.tuple(),
                r -> new OpenByReason(r.getString("reason"), r.getLong("n"), r.getOffsetDateTime("oldest")));
    }

    /** An UNKNOWN or stuck PROCESSING payment and when the resolver tries it next. */
    public record Unresolved(
            UUID id,
            String status,
            long amount,
            String currency,
            OffsetDateTime createdAt,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError) {}

    /** UNKNOWN payments and PROCESSING ones older than {@code stuckAfter}, oldest first (at most {@code limit}). */
    public Uni<List<Unresolved>> unresolved(Duration stuckAfter, int limit) {
        return list(
                """
                SELECT id, status, amount, currency, created_at, attempts, next_attempt_at, last_error FROM payments
                 WHERE status IN ('PROCESSING', 'UNKNOWN')
                   AND (status = 'UNKNOWN' OR created_at < now() - make_interval(secs => $1))
                 ORDER BY created_at, id LIMIT $2""",
                Tuple.of((double) stuckAfter.toMillis() / 1000, limit),
                r -> new Unresolved(
                        r.getUUID("id"),
                        r.getString("status"),
                        r.getLong("amount"),
                        r.getString("currency"),
                        r.getOffsetDateTime("created_at"),
                        r.getInteger("attempts"),
                        r.getOffsetDateTime("next_attempt_at"),
                        r.getString("last_error")));
    }

    /** A PENDING refund. */
    public record PendingRefund(
            UUID id,
            UUID paymentId,
            long amount,
            String currency,
            OffsetDateTime createdAt,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError) {}

    public Uni<List<PendingRefund>> pendingRefunds(int limit) {
        return list(
                """
                SELECT id, payment_id, amount, currency, created_at, attempts, next_attempt_at, last_error FROM refunds
                 WHERE status = 'PENDING' ORDER BY created_at, id LIMIT $1""",
                Tuple.of(limit),
                r -> new PendingRefund(
                        r.getUUID("id"),
                        r.getUUID("payment_id"),
                        r.getLong("amount"),
                        r.getString("currency"),
                        r.getOffsetDateTime("created_at"),
                        r.getInteger("attempts"),
                        r.getOffsetDateTime("next_attempt_at"),
                        r.getString("last_error")));
    }

    /**
     * Counts for the live page: unresolved payments, pending refunds, unsent outbox rows and the oldest one, dead-lettered
     * refund commands and the latest one.
     */
    public record Counts(
            long unresolved,
            long pendingRefunds,
            long outboxUnsent,
            OffsetDateTime oldestUnsent,
            long deadLetters,
            OffsetDateTime latestDeadLetter) {}

    public Uni<Counts> counts(Duration stuckAfter) {
        return pool.preparedQuery(
                        """
                        SELECT (SELECT count(*) FROM payments WHERE status IN ('PROCESSING', 'UNKNOWN')
                                   AND (status = 'UNKNOWN' OR created_at < now() - make_interval(secs => $1))) AS unresolved,
                               (SELECT count(*) FROM refunds WHERE status = 'PENDING') AS pending,
                               (SELECT count(*) FROM outbox WHERE sent_at IS NULL) AS unsent,
                               (SELECT min(created_at) FROM outbox WHERE sent_at IS NULL) AS oldest_unsent,
                               (SELECT count(*) FROM refund_dead_letters) AS dead_letters,
                               (SELECT max(dead_lettered_at) FROM refund_dead_letters) AS latest_dead_letter""")
                .execute(Tuple.of((double) stuckAfter.toMillis() / 1000))
                .map(rows -> {
                    Row r = rows.iterator().next();
                    return new Counts(
                            r.getLong("unresolved"),
                            r.getLong("pending"),
                            r.getLong("unsent"),
                            r.getOffsetDateTime("oldest_unsent"),
                            r.getLong("dead_letters"),
                            r.getOffsetDateTime("latest_dead_letter"));
                });
    }

    /** A refund command refunds-worker sent to the dead-letter topic (refund_dead_letters). */
    public record DeadLetter(
            OffsetDateTime at,
            UUID refundId,
            UUID paymentId,
            String recordKey,
            String reason,
            String topic,
            int partition,
            long offset) {}

    /** The latest dead-lettered refund commands, newest first (at most {@code limit}). */
    public Uni<List<DeadLetter>> deadLetters(int limit) {
        return list(
                """
                SELECT dead_lettered_at, refund_id, payment_id, record_key, reason, topic, kafka_partition, kafka_offset
                  FROM refund_dead_letters ORDER BY dead_lettered_at DESC, id DESC LIMIT $1""",
                Tuple.of(limit),
                r -> new DeadLetter(
                        r.getOffsetDateTime("dead_lettered_at"),
                        r.getUUID("refund_id"),
                        r.getUUID("payment_id"),
                        r.getString("record_key"),
                        r.getString("reason"),
                        r.getString("topic"),
                        r.getInteger("kafka_partition"),
                        r.getLong("kafka_offset")));
    }

    // --- operations queue ----------------------------------------------------------------------------------------

    /** An operations item as the console lists it. */
    public record OpsItem(
            long id,
            String subjectType,
            String subjectId,
            String reason,
            String details,
            String status,
            OffsetDateTime createdAt,
            OffsetDateTime resolvedAt) {}

    /**
     * A page of items in this status after id {@code after} (keyset), oldest first; reason and subject type filter
     * when not null. Returns up to {@code limit + 1} rows: the extra one tells that a next page exists.
     */
    public Uni<List<OpsItem>> operations(String status, String reason, String subjectType, long after, int limit) {
        return list(
                """
                SELECT id, subject_type, subject_id, reason, details::text AS details, status, created_at, resolved_at
                  FROM operations_queue
                 WHERE status = $1 AND id > $2 AND ($3::text IS NULL OR reason = $3)
                   AND ($4::text IS NULL OR subject_type = $4)
                 ORDER BY id LIMIT $5""",
                Tuple.of(status, after, reason, subjectType, limit + 1),
                ConsoleRepository::opsItem);
    }

    public Uni<OpsItem> operationsItem(long id) {
        return list(
                        """
                        SELECT id, subject_type, subject_id, reason, details::text AS details, status, created_at,
                               resolved_at
                          FROM operations_queue WHERE id = $1""",
                        Tuple.of(id),
                        ConsoleRepository::opsItem)
                .map(items -> items.isEmpty() ? null : items.get(0));
    }

    /** The reasons that have items, for the filter. */
    public Uni<List<String>> operationsReasons() {
        return list("SELECT DISTINCT reason FROM operations_queue ORDER BY reason", Tuple.tuple(), r -> r.getString(0));
    }

    /** An audit row. */
    public record AuditRow(OffsetDateTime at, String operator, String channel, String action, String note) {}

    public Uni<List<AuditRow>> auditOf(String subject) {
        return list(
                """
                SELECT at, operator, channel, action, note FROM operator_audit WHERE subject = $1 ORDER BY id""",
                Tuple.of(subject),
                r -> new AuditRow(
                        r.getOffsetDateTime("at"),
                        r.getString("operator"),
                        r.getString("channel"),
                        r.getString("action"),
                        r.getString("note")));
    }

    private static OpsItem opsItem(Row r) {
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

    // --- reconciliation ------------------------------------------------------------------------------------------

    /** The last run of a business date with its summary (null while RUNNING or FAILED without one). */
    public record Run(
            long id,
            LocalDate businessDate,
            String status,
            OffsetDateTime startedAt,
            OffsetDateTime finishedAt,
            JsonObject summary) {}

    /** The last run of each business date before {@code before}, newest date first; {@code limit + 1} rows. */
    public Uni<List<Run>> lastRuns(LocalDate before, int limit) {
        return list(
                """
                SELECT DISTINCT ON (business_date) id, business_date, status, started_at, finished_at, summary
                  FROM recon_runs WHERE business_date < $1
                 ORDER BY business_date DESC, id DESC LIMIT $2""",
                Tuple.of(before, limit + 1),
                ConsoleRepository::run);
    }

    public Uni<List<Run>> runsOf(LocalDate date) {
        return list(
                """
                SELECT id, business_date, status, started_at, finished_at, summary FROM recon_runs
                 WHERE business_date = $1 ORDER BY id DESC LIMIT 100""",
                Tuple.of(date),
                ConsoleRepository::run);
    }

    private static Run run(Row r) {
        return new Run(
                r.getLong("id"),
                r.getLocalDate("business_date"),
                r.getString("status"),
                r.getOffsetDateTime("started_at"),
                r.getOffsetDateTime("finished_at"),
                r.getJsonObject("summary"));
    }

    /** Breaks of one business date that are not resolved, and their unmatched amount per currency. */
    public record DayBreaks(LocalDate date, String currency, long breaks, long unmatched) {}

    /** Per date and currency in [from, to]: unresolved breaks and the sum of |psp amount - our amount|. */
    public Uni<List<DayBreaks>> breaksPerDay(LocalDate from, LocalDate to) {
        return list(
                """
                SELECT business_date, coalesce(currency, '???') AS currency, count(*) AS n,
                       sum(abs(coalesce(psp_amount, 0) - coalesce(internal_amount, 0)))::bigint AS unmatched
                  FROM recon_breaks
                 WHERE business_date BETWEEN $1 AND $2 AND status <> 'RESOLVED'
                 GROUP BY business_date, currency ORDER BY business_date, currency""",
                Tuple.of(from, to),
                r -> new DayBreaks(
                        r.getLocalDate("business_date"),
                        r.getString("currency"),
                        r.getLong("n"),
                        r.getLong("unmatched")));
    }

    /** A break. */
    public record Break(
            long id,
            String type,
            String reference,
            String pspReference,
            Long internalAmount,
            Long pspAmount,
            String currency,
            String status,
            int timesSeen,
            OffsetDateTime openedAt,
            String resolution,
            String subjectKind) {}

    /** A page of a date's breaks after id {@code after} (keyset); {@code limit + 1} rows. */
    public Uni<List<Break>> breaks(LocalDate date, long after, int limit) {
        return list(
                BREAK_SELECT + " WHERE b.business_date = $1 AND b.id > $2 ORDER BY b.id LIMIT $3",
                Tuple.of(date, after, limit + 1),
                ConsoleRepository::breakRow);
    }

    private static final String BREAK_SELECT =
            """
            SELECT b.id, b.break_type, b.reference, b.psp_reference, b.internal_amount, b.psp_amount, b.currency,
                   b.status, b.times_seen, b.opened_at, b.resolution, b.business_date,
                   CASE WHEN EXISTS (SELECT 1 FROM payments p WHERE p.id = r.id) THEN 'payment'
                        WHEN EXISTS (SELECT 1 FROM refunds f WHERE f.id = r.id) THEN 'refund'
                        ELSE NULL END AS subject_kind
              FROM recon_breaks b
              CROSS JOIN LATERAL (SELECT CASE WHEN b.reference ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                                              THEN b.reference::uuid END AS id) r""";

    private static Break breakRow(Row r) {
        return new Break(
                r.getLong("id"),
                r.getString("break_type"),
                r.getString("reference"),
                r.getString("psp_reference"),
                r.getLong("internal_amount"),
                r.getLong("psp_amount"),
                r.getString("currency"),
                r.getString("status"),
                r.getInteger("times_seen"),
                r.getOffsetDateTime("opened_at"),
                r.getString("resolution"),
                r.getString("subject_kind"));
    }

    // --- a payment's story ---------------------------------------------------------------------------------------

    /** Payment ids matching a lookup: payment id, refund id, order id or PSP reference (at most 20). */
    public Uni<List<UUID>> findPayments(String query) {
        UUID id = uuidOrNull(query);
        if (id != null) {
            return list(
                    """
                    SELECT id FROM payments WHERE id = $1
                    UNION SELECT payment_id FROM refunds WHERE id = $1""",
                    Tuple.of(id),
                    r -> r.getUUID(0));
        }
        // order_id alone and psp_reference have no index of their own: a sequential scan, fine for a lookup by hand
        // (docs/console.md).
        return list(
                """
                SELECT id FROM payments WHERE order_id = $1 OR psp_reference = $1
                UNION SELECT payment_id FROM refunds WHERE psp_reference = $1
                LIMIT 20""",
                Tuple.of(query),
                r -> r.getUUID(0));
    }

    /** The payment row as the story shows it, or null. */
    public record PaymentRow(
            UUID id,
            UUID merchantId,
            String merchantName,
            String orderId,
            long amount,
            String currency,
            String status,
            long refundedAmount,
            String pspReference,
            String declineCode,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError,
            OffsetDateTime createdAt,
            OffsetDateTime capturedAt) {}

    public Uni<PaymentRow> payment(UUID id) {
        return list(
                        """
                        SELECT p.id, p.merchant_id, m.name, p.order_id, p.amount, p.currency, p.status,
                               p.refunded_amount, p.psp_reference, p.decline_code, p.attempts, p.next_attempt_at,
                               p.last_error, p.created_at, p.captured_at
                          FROM payments p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $1""",
                        Tuple.of(id),
                        r -> new PaymentRow(
                                r.getUUID("id"),
                                r.getUUID("merchant_id"),
                                r.getString("name"),
                                r.getString("order_id"),
                                r.getLong("amount"),
                                r.getString("currency"),
                                r.getString("status"),
                                r.getLong("refunded_amount"),
                                r.getString("psp_reference"),
                                r.getString("decline_code"),
                                r.getInteger("attempts"),
                                r.getOffsetDateTime("next_attempt_at"),
                                r.getString("last_error"),
                                r.getOffsetDateTime("created_at"),
                                r.getOffsetDateTime("captured_at")))
                .map(rows -> rows.isEmpty() ? null : rows.get(0));
    }

    /** One timeline entry: when, from which record, what happened. */
    public record Event(OffsetDateTime at, String source, String title, String detail) {}

    /**
     * Everything recorded about a payment and its refunds, each as timeline entries: transitions, PSP calls (the
     * capture's charge, the resolver's look-ups and re-sent charges), idempotency key and its replays, webhooks,
     * ledger entries (with the running balance per account), outbox events (created, sent), refunds, dead-lettered
     * refund commands, settlement lines, breaks, operations items and operator actions. One statement; the caller
     * sorts.
     */
    public Uni<List<Event>> story(UUID paymentId) {
        return list(
                STORY,
                Tuple.of(paymentId),
                r -> new Event(
                        r.getOffsetDateTime("at"), r.getString("source"), r.getString("title"), r.getString("detail")));
    }

    private static final String STORY = SqlResource.load(ConsoleRepository.class, "console-story.sql");

    // --- helpers -------------------------------------------------------------------------------------------------

    static UUID uuidOrNull(String value) {
        if (value == null || value.length() != 36) {
            return null;
        }
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private <T> Uni<List<T>> list(String sql, Tuple args, Function<Row, T> mapper) {
        return pool.preparedQuery(sql).execute(args).map((RowSet<Row> rows) -> {
            List<T> out = new ArrayList<>(rows.size());
            rows.forEach(row -> out.add(mapper.apply(row)));
            return out;
        });
    }
}
