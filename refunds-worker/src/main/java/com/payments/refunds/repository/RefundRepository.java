package com.payments.refunds.repository;

import com.payments.contracts.SqlResource;
import com.payments.contracts.events.RefundRequested;
import com.payments.refunds.Refund;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;

/** SQL on {@code refunds} (and the reservation on {@code payments}). Every state change is guarded on PENDING. */
@ApplicationScoped
public class RefundRepository {
    private static final String CLAIM_FOR_COMMANDS =
            SqlResource.load(RefundRepository.class, "refund-command-claim.sql");
    private static final String SCHEDULE_NOW = SqlResource.load(RefundRepository.class, "refund-schedule-now.sql");

    /** Whether a rescheduled refund is past its escalation deadline. */
    public record Rescheduled(int attempts, boolean overdue) {}

    /**
     * What {@link #claimForCommands} found for a command: whether the command's event was applied before, the refund (null when
     * there is none; as claimed when {@code claimed}, else as it was) and whether this call claimed it.
     */
    public record CommandClaim(boolean applied, Refund refund, boolean claimed) {}

    /** PENDING refunds: how many, and the oldest one's age in whole seconds (0 when none). */
    public record PendingSnapshot(long count, long oldestSeconds) {}

    /**
     * One statement over the PENDING rows only: the two partial indexes, {@code refunds_pending_unscheduled} (V30) and
     * {@code refunds_scheduled} (V103), one for each side of the {@code OR} ({@code status} alone matches neither).
     */
    public Uni<PendingSnapshot> pendingSnapshot(SqlClient client) {
        return client.query(
                        """
                        SELECT count(*) AS pending,
                               COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::bigint AS oldest
                          FROM refunds
                         WHERE status = 'PENDING' AND (next_attempt_at IS NULL OR next_attempt_at IS NOT NULL)""")
                .execute()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return new PendingSnapshot(row.getLong("pending"), row.getLong("oldest"));
                });
    }

    /** The refund with its payment's PSP charge, or null. */
    public Uni<Refund> find(SqlClient client, UUID refundId) {
        return client.preparedQuery(
                        """
                        SELECT r.id, r.payment_id, r.merchant_id, r.amount, r.currency, r.status, r.attempts,
                               p.psp_reference AS charge_reference
                          FROM refunds r JOIN payments p ON p.id = r.payment_id
                         WHERE r.id = $1""")
                .execute(Tuple.of(refundId))
                .map(rows ->
                        rows.size() == 0 ? null : Refund.from(rows.iterator().next()));
    }

    /**
     * Commands' deduplication checks, look-ups and claims in one statement for one or many commands (one round trip
     * and one commit for all, instead of a transaction of five statements each). Nothing is read or claimed for a
     * command whose event {@code consumer} applied before. A claim counts the attempt and takes the lease ({@code
     * next_attempt_at = now() + lease}) of a PENDING refund that no other claim's lease (or a scheduled retry) holds,
     * the same condition as {@link #claimDue}'s, so of a command and the sync only the first claim wins; and only of a
     * refund that agrees with the command (payment, merchant, amount, currency, charge): the caller tells one that does
     * not from the returned row. One {@link CommandClaim} per command, in order; a refund must not be asked for twice.
     */
    public Uni<List<CommandClaim>> claimForCommands(
            SqlClient client, String consumer, Duration lease, List<RefundRequested> commands) {
        return client.preparedQuery(CLAIM_FOR_COMMANDS)
                .execute(Tuple.from(Arrays.asList(
                        column(commands, RefundRequested::eventId, UUID[]::new),
                        column(commands, RefundRequested::refundId, UUID[]::new),
                        column(commands, RefundRequested::paymentId, UUID[]::new),
                        column(commands, RefundRequested::merchantId, UUID[]::new),
                        column(commands, RefundRequested::amount, Long[]::new),
                        column(commands, RefundRequested::currency, String[]::new),
                        column(commands, RefundRequested::pspChargeReference, String[]::new),
                        consumer,
                        lease.toMillis())))
                .map(rows -> {
                    List<CommandClaim> claims = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        Refund refund = row.getUUID("id") == null ? null : Refund.from(row);
                        claims.add(new CommandClaim(row.getBoolean("applied"), refund, row.getBoolean("claimed")));
                    }
                    return claims;
                });
    }

    private static <T> T[] column(
            List<RefundRequested> commands, Function<RefundRequested, T> field, IntFunction<T[]> array) {
        return commands.stream().map(field).toArray(array);
    }

    /**
     * Claims up to {@code limit} PENDING refunds that are due (their retry time has come, or nobody scheduled them
     * and they are older than {@code unscheduledAfter}); {@code SKIP LOCKED} keeps replicas from taking the same.
     */
    public Uni<List<Refund>> claimDue(SqlClient client, int limit, Duration lease, Duration unscheduledAfter) {
        return client.preparedQuery(
                        """
                        UPDATE refunds r SET attempts = r.attempts + 1,
                                             next_attempt_at = now() + interval '1 millisecond' * $2::bigint
                          FROM payments p
                         WHERE p.id = r.payment_id AND r.id IN (
                               SELECT id FROM refunds
                                WHERE status = 'PENDING'
                                  AND (next_attempt_at <= now()
                                       OR (next_attempt_at IS NULL
                                           AND created_at <= now() - interval '1 millisecond' * $3::bigint))
                                ORDER BY coalesce(next_attempt_at, created_at)
                                LIMIT $1::int
                                  FOR UPDATE SKIP LOCKED)
                        RETURNING r.id, r.payment_id, r.merchant_id, r.amount, r.currency, r.status, r.attempts,
                                  p.psp_reference AS charge_reference""")
                .execute(Tuple.of(limit, lease.toMillis(), unscheduledAfter.toMillis()))
                .map(RefundRepository::toList);
    }

    /**
     * Makes a PENDING refund that nobody scheduled due for the sync at once ({@code next_attempt_at = now()}); a
     * refund under a lease or with a retry scheduled keeps its time. Returns whether it changed the row.
     */
    public Uni<Boolean> scheduleNow(SqlClient client, UUID refundId) {
        return client.preparedQuery(SCHEDULE_NOW).execute(Tuple.of(refundId)).map(rows -> rows.rowCount() == 1);
    }

    /**
     * Gives back a claim that was not used (nothing sent to the PSP): the refund is due at once and the claim's attempt
     * is not counted. Returns whether it changed the row (false when the refund is no longer PENDING).
     */
    public Uni<Boolean> release(SqlClient client, UUID refundId) {
        return client.preparedQuery(
                        """
                        UPDATE refunds SET attempts = attempts - 1, next_attempt_at = now()
                         WHERE id = $1 AND status = 'PENDING' AND attempts > 0""")
                .execute(Tuple.of(refundId))
                .map(rows -> rows.rowCount() == 1);
    }

    /**
     * Keeps a PENDING refund PENDING and schedules its next attempt with exponential backoff on its attempt count.
     * Returns null when the refund was no longer PENDING.
     */
    public Uni<Rescheduled> reschedule(
            SqlClient client, UUID refundId, String error, Duration initial, Duration max, Duration escalateAfter) {
        return client.preparedQuery(
                        """
                        UPDATE refunds SET last_error = left($2, 500),
                               next_attempt_at = now() + interval '1 millisecond'
                                   * least($4::bigint, $3::bigint * power(2, least(greatest(attempts - 1, 0), 30)))
                         WHERE id = $1 AND status = 'PENDING'
                        RETURNING attempts, created_at <= now() - interval '1 millisecond' * $5::bigint AS overdue""")
                .execute(Tuple.of(refundId, error, initial.toMillis(), max.toMillis(), escalateAfter.toMillis()))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new Rescheduled(row.getInteger("attempts"), row.getBoolean("overdue"));
                });
    }

    private static List<Refund> toList(RowSet<Row> rows) {
        List<Refund> list = new ArrayList<>(rows.size());
        rows.forEach(row -> list.add(Refund.from(row)));
        return list;
    }
}
