package com.payments.api.console;

import static com.payments.api.console.ConsoleSql.list;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** The live page's reads. Nothing here writes. */
@ApplicationScoped
public class ConsoleLiveRepository {
    private final Pool pool;

    public ConsoleLiveRepository(Pool pool) {
        this.pool = pool;
    }

    /** Open operations items per reason: how many, the oldest. */
    public record OpenByReason(String reason, long count, OffsetDateTime oldest) {}

    public Uni<List<OpenByReason>> openByReason() {
        return list(
                pool,
                """
                SELECT reason, count(*) AS n, min(created_at) AS oldest FROM operations_queue
                 WHERE status = 'OPEN' GROUP BY reason ORDER BY min(created_at)""",
                Tuple.tuple(),
                r -> new OpenByReason(r.getString("reason"), r.getLong("n"), r.getOffsetDateTime("oldest")));
    }

    /**
     * A payment or refund that is not settled yet and when it is tried next: an unresolved payment (its {@code
     * paymentId} is its own id; {@code capturedAmount} what a capture in flight asks for), or a PENDING refund.
     */
    public record InFlight(
            UUID id,
            String status,
            String captureMethod,
            UUID paymentId,
            long amount,
            Long capturedAmount,
            String currency,
            OffsetDateTime createdAt,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError) {
        static InFlight from(Row r) {
            return new InFlight(
                    r.getUUID("id"),
                    r.getString("status"),
                    r.getString("capture_method"),
                    r.getUUID("payment_id"),
                    r.getLong("amount"),
                    r.getLong("captured_amount"),
                    r.getString("currency"),
                    r.getOffsetDateTime("created_at"),
                    r.getInteger("attempts"),
                    r.getOffsetDateTime("next_attempt_at"),
                    r.getString("last_error"));
        }
    }

    /**
     * A PENDING refund, written so that both partial indexes serve it, one for each side of the {@code OR}:
     * {@code refunds_pending_unscheduled} (V30) and {@code refunds_scheduled} (V103); {@code status} alone matches
     * neither.
     */
    private static final String PENDING_REFUND =
            "status = 'PENDING' AND (next_attempt_at IS NULL OR next_attempt_at IS NOT NULL)";

    /** An automatic payment unresolved: UNKNOWN, or PROCESSING for longer than stuck-after ({@code $1} seconds). */
    private static final String AUTOMATIC_UNRESOLVED =
            """
            status IN ('PROCESSING', 'UNKNOWN')
               AND (status = 'UNKNOWN' OR created_at < now() - make_interval(secs => $1))""";

    /**
     * A manual payment whose PSP call (authorization, capture, void, expiry's void) has no recorded outcome: unknown
     * (a {@code last_error}, as UNKNOWN), or in flight for longer than stuck-after since the call's state began (its
     * {@code updated_at}: the trigger sets it with the transition; the payment itself may be days old). Counted in a
     * statement of its own, so that the automatic one keeps to its partial indexes; the manual states' partial index
     * comes with the resolver's work on them (docs/operations.md, "Payment states").
     */
    private static final String MANUAL_UNRESOLVED =
            """
            status IN ('AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING')
               AND (last_error IS NOT NULL OR updated_at < now() - make_interval(secs => $1))""";

    private static final String UNRESOLVED_COLUMNS =
            """
            id, status, capture_method, id AS payment_id, amount,
                   CASE WHEN status = 'CAPTURING' THEN captured_amount END AS captured_amount, currency, created_at,
                   attempts, next_attempt_at, last_error""";

    private static final String UNRESOLVED =
            """
            SELECT %s FROM payments WHERE %s
            UNION ALL
            SELECT %s FROM payments WHERE %s
            ORDER BY created_at, id LIMIT $2"""
                    .formatted(UNRESOLVED_COLUMNS, AUTOMATIC_UNRESOLVED, UNRESOLVED_COLUMNS, MANUAL_UNRESOLVED);

    /** Unresolved payments of both capture methods, oldest first (at most {@code limit}). */
    public Uni<List<InFlight>> unresolved(Duration stuckAfter, int limit) {
        return list(pool, UNRESOLVED, Tuple.of(seconds(stuckAfter), limit), InFlight::from);
    }

    /** PENDING refunds, oldest first (at most {@code limit}). */
    public Uni<List<InFlight>> pendingRefunds(int limit) {
        return list(
                pool,
                """
                SELECT id, status, NULL AS capture_method, payment_id, amount, NULL::bigint AS captured_amount,
                       currency, created_at, attempts, next_attempt_at, last_error
                  FROM refunds
                 WHERE %s ORDER BY created_at, id LIMIT $1"""
                        .formatted(PENDING_REFUND),
                Tuple.of(limit),
                InFlight::from);
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

    private static final String COUNTS =
            """
            SELECT (SELECT count(*) FROM payments WHERE %s)
                   + (SELECT count(*) FROM payments WHERE %s) AS unresolved,
                   (SELECT count(*) FROM refunds WHERE %s) AS pending,
                   (SELECT count(*) FROM outbox WHERE sent_at IS NULL) AS unsent,
                   (SELECT min(created_at) FROM outbox WHERE sent_at IS NULL) AS oldest_unsent,
                   (SELECT count(*) FROM refund_dead_letters) AS dead_letters,
                   (SELECT max(dead_lettered_at) FROM refund_dead_letters) AS latest_dead_letter"""
                    .formatted(AUTOMATIC_UNRESOLVED, MANUAL_UNRESOLVED, PENDING_REFUND);

    public Uni<Counts> counts(Duration stuckAfter) {
        return ConsoleSql.first(
                pool,
                COUNTS,
                Tuple.of(seconds(stuckAfter)),
                r -> new Counts(
                        r.getLong("unresolved"),
                        r.getLong("pending"),
                        r.getLong("unsent"),
                        r.getOffsetDateTime("oldest_unsent"),
                        r.getLong("dead_letters"),
                        r.getOffsetDateTime("latest_dead_letter")));
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
                pool,
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

    private static double seconds(Duration duration) {
        return (double) duration.toMillis() / 1000;
    }
}
