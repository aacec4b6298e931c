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
     * A payment or refund that is not settled yet and when it is tried next: an UNKNOWN or stuck PROCESSING payment
     * (its {@code paymentId} is its own id), or a PENDING refund.
     */
    public record InFlight(
            UUID id,
            String status,
            UUID paymentId,
            long amount,
            String currency,
            OffsetDateTime createdAt,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError) {
        static InFlight from(Row r) {
            return new InFlight(
                    r.getUUID("id"),
                    r.getString("status"),
                    r.getUUID("payment_id"),
                    r.getLong("amount"),
                    r.getString("currency"),
                    r.getOffsetDateTime("created_at"),
                    r.getInteger("attempts"),
                    r.getOffsetDateTime("next_attempt_at"),
                    r.getString("last_error"));
        }
    }

    /** UNKNOWN payments and PROCESSING ones older than {@code stuckAfter}, oldest first (at most {@code limit}). */
    public Uni<List<InFlight>> unresolved(Duration stuckAfter, int limit) {
        return list(
                pool,
                """
                SELECT id, status, id AS payment_id, amount, currency, created_at, attempts, next_attempt_at, last_error
                  FROM payments
                 WHERE status IN ('PROCESSING', 'UNKNOWN')
                   AND (status = 'UNKNOWN' OR created_at < now() - make_interval(secs => $1))
                 ORDER BY created_at, id LIMIT $2""",
                Tuple.of(seconds(stuckAfter), limit),
                InFlight::from);
    }

    /** PENDING refunds, oldest first (at most {@code limit}). */
    public Uni<List<InFlight>> pendingRefunds(int limit) {
        return list(
                pool,
                """
                SELECT id, status, payment_id, amount, currency, created_at, attempts, next_attempt_at, last_error
                  FROM refunds
                 WHERE status = 'PENDING' ORDER BY created_at, id LIMIT $1""",
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

    public Uni<Counts> counts(Duration stuckAfter) {
        return ConsoleSql.first(
                pool,
                """
                SELECT (SELECT count(*) FROM payments WHERE status IN ('PROCESSING', 'UNKNOWN')
                           AND (status = 'UNKNOWN' OR created_at < now() - make_interval(secs => $1))) AS unresolved,
                       (SELECT count(*) FROM refunds WHERE status = 'PENDING') AS pending,
                       (SELECT count(*) FROM outbox WHERE sent_at IS NULL) AS unsent,
                       (SELECT min(created_at) FROM outbox WHERE sent_at IS NULL) AS oldest_unsent,
                       (SELECT count(*) FROM refund_dead_letters) AS dead_letters,
                       (SELECT max(dead_lettered_at) FROM refund_dead_letters) AS latest_dead_letter""",
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
