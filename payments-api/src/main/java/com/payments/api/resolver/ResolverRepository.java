package com.payments.api.resolver;

import com.payments.api.PaymentStatus;
import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The resolver's SQL on payments: claims with a lease ({@code attempts + 1}, {@code next_attempt_at} pushed
 * forward) under {@code FOR UPDATE SKIP LOCKED}, the reschedule and the gauges (the re-read under
 * a row lock is {@link com.payments.api.payment.PaymentRepository#lock}).
 */
@ApplicationScoped
public class ResolverRepository {

    /**
     * A claimed payment: {@code attempt} is the attempt number this claim owns; {@code capturedAmount} that of a
     * manual capture (CAPTURING), else null.
     */
    public record Claimed(
            UUID id,
            UUID merchantId,
            PaymentStatus status,
            long amount,
            String currency,
            String source,
            String pspReference,
            int attempt,
            Instant createdAt,
            Long capturedAmount) {}

    /** Numbers for the gauges. */
    public record Snapshot(
            long unknown,
            long oldestUnknownSeconds,
            long stuckProcessing,
            long openOperations,
            long oldestOpenOperationSeconds) {}

    private static final String CLAIM = SqlResource.load(ResolverRepository.class, "resolver-claim.sql");

    /**
     * Claims up to {@code limit} due payments (UNKNOWN, or PROCESSING whose stuck-after time passed, or a lease that
     * expired; of manual payments AUTHORIZING, CAPTURING, CANCELING and EXPIRING alike). Other instances skip the locked rows during the statement and the lease keeps them away afterwards.
     */
    public Uni<List<Claimed>> claim(SqlClient client, int limit, Duration lease) {
        return client.preparedQuery(CLAIM)
                .execute(Tuple.of(limit, lease.toMillis() / 1000.0))
                .map(rows -> {
                    List<Claimed> out = new ArrayList<>();
                    for (Row row : rows) {
                        out.add(new Claimed(
                                row.getUUID("id"),
                                row.getUUID("merchant_id"),
                                PaymentStatus.valueOf(row.getString("status")),
                                row.getLong("amount"),
                                row.getString("currency"),
                                row.getString("source"),
                                row.getString("psp_reference"),
                                row.getInteger("attempts"),
                                row.getOffsetDateTime("created_at").toInstant(),
                                row.getLong("captured_amount")));
                    }
                    return out;
                });
    }

    /**
     * Still unknown after attempt {@code attempt}: the next attempt after {@code delay}, or none once the pending call is
     * older than {@code deadline} (then returns true: escalate). A charge or an authorization is as old as the payment;
     * a capture or void of an authorization, which may come days later, counts from its move out of AUTHORIZED (the
     * latest transition into its state). Null when the claim was lost (the lease expired and
     * another instance took the payment) or the payment was resolved meanwhile. {@code pspReference}, the PSP's id of
     * the charge if the answer named one, is kept unless the payment has one already.
     */
    public Uni<Boolean> reschedule(
            SqlClient client,
            UUID id,
            int attempt,
            Duration delay,
            Duration deadline,
            String lastError,
            String pspReference) {
        return client.preparedQuery(
                        """
                        UPDATE payments p
                           SET next_attempt_at = CASE WHEN coalesce(
                                                          (SELECT max(t.at) FROM payment_transitions t
                                                            WHERE t.payment_id = p.id AND t.to_status = p.status
                                                              AND p.status IN ('CAPTURING', 'CANCELING', 'EXPIRING')),
                                                          p.created_at) + make_interval(secs => $4) <= now() THEN NULL
                                                      ELSE now() + make_interval(secs => $3) END,
                               last_error = $5,
                               psp_reference = COALESCE(psp_reference, $6)
                         WHERE id = $1 AND attempts = $2
                           AND status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING')
                        RETURNING next_attempt_at IS NULL AS escalated""")
                .execute(Tuple.of(
                        id, attempt, delay.toMillis() / 1000.0, deadline.toMillis() / 1000.0, lastError, pspReference))
                .map(rows ->
                        rows.rowCount() == 0 ? null : rows.iterator().next().getBoolean("escalated"));
    }

    /**
     * Stops working a payment as attempt {@code attempt}: {@code next_attempt_at = NULL}, so it is never claimed again
     * (it waits for an operator). False when the claim was lost or the payment was resolved meanwhile.
     */
    public Uni<Boolean> stop(SqlClient client, UUID id, int attempt, String lastError) {
        return client.preparedQuery(
                        """
                        UPDATE payments SET next_attempt_at = NULL, last_error = $3
                         WHERE id = $1 AND attempts = $2
                           AND status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING')""")
                .execute(Tuple.of(id, attempt, lastError))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<Snapshot> snapshot(SqlClient client) {
        return client.query(
                        """
                        SELECT (SELECT count(*) FROM payments WHERE status = 'UNKNOWN') AS unknown,
                               (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::bigint
                                  FROM payments WHERE status = 'UNKNOWN') AS oldest,
                               (SELECT count(*) FROM payments
                                 WHERE status = 'PROCESSING' AND next_attempt_at <= now()) AS stuck,
                               (SELECT count(*) FROM operations_queue WHERE status = 'OPEN') AS open_ops,
                               (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::bigint
                                  FROM operations_queue WHERE status = 'OPEN') AS oldest_op""")
                .execute()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return new Snapshot(
                            row.getLong("unknown"),
                            row.getLong("oldest"),
                            row.getLong("stuck"),
                            row.getLong("open_ops"),
                            row.getLong("oldest_op"));
                });
    }
}
