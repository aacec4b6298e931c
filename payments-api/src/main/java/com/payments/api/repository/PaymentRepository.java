package com.payments.api.repository;

import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.Refund;
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

/** SQL on payments (and the refunds read with them). Every merchant-facing query is scoped by merchant. */
@ApplicationScoped
public class PaymentRepository {
    static final String COLUMNS =
            "id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at";

    /**
     * Inserts a PROCESSING payment. {@code next_attempt_at} tells the resolver when to treat it as stuck (the
     * process died between the claim and the outcome).
     */
    public Uni<Payment> insertProcessing(
            SqlClient client,
            UUID id,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String source,
            Duration stuckAfter) {
        return client.preparedQuery(
                        """
                        INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, next_attempt_at)
                        VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
                        RETURNING %s"""
                                .formatted(COLUMNS))
                .execute(Tuple.from(
                        List.of(id, merchantId, orderId, amount, currency, source, (double) stuckAfter.toSeconds())))
                .map(PaymentRepository::single);
    }

    /**
     * The guarded state change: moves the payment to {@code target} only from the states the transition table
     * allows. Returns the updated payment, or null when the payment was not in such a state (someone else
     * recorded an outcome first). {@code actor} lands in payment_transitions via the trigger.
     */
    public Uni<Payment> moveTo(
            SqlClient client,
            UUID id,
            PaymentStatus target,
            String pspReference,
            String declineCode,
            String lastError,
            String actor) {
        String[] from = target.allowedSources().stream().map(Enum::name).toArray(String[]::new);
        // set_config in the WHERE clause sets the actor for the AFTER trigger in the same round trip.
        return client.preparedQuery(
                        """
                        UPDATE payments
                           SET status = $2,
                               psp_reference = COALESCE($3, psp_reference),
                               decline_code = $4,
                               last_error = $5,
                               captured_at = CASE WHEN $2 = 'CAPTURED' THEN now() ELSE captured_at END,
                               next_attempt_at = CASE WHEN $2 = 'UNKNOWN' THEN now() ELSE NULL END
                         WHERE id = $1 AND status = ANY($6) AND set_config('payments.actor', $7, true) IS NOT NULL
                         RETURNING %s"""
                                .formatted(COLUMNS))
                .execute(
                        Tuple.from(Arrays.asList(id, target.name(), pspReference, declineCode, lastError, from, actor)))
                .map(rows -> rows.rowCount() == 0 ? null : single(rows));
    }

    public Uni<Payment> find(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery("SELECT %s FROM payments WHERE id = $1 AND merchant_id = $2".formatted(COLUMNS))
                .execute(Tuple.of(id, merchantId))
                .map(rows -> rows.rowCount() == 0 ? null : single(rows));
    }

    /** A payment by id alone: for the resolver and webhooks, which act for the platform, not for a merchant. */
    public Uni<Payment> findAnyMerchant(SqlClient client, UUID id) {
        return client.preparedQuery("SELECT %s FROM payments WHERE id = $1".formatted(COLUMNS))
                .execute(Tuple.of(id))
                .map(rows -> rows.rowCount() == 0 ? null : single(rows));
    }

    public Uni<List<Payment>> findByOrderId(SqlClient client, UUID merchantId, String orderId, int limit) {
        return client.preparedQuery(
                        """
                        SELECT %s FROM payments WHERE merchant_id = $1 AND order_id = $2
                         ORDER BY created_at DESC, id LIMIT $3"""
                                .formatted(COLUMNS))
                .execute(Tuple.of(merchantId, orderId, limit))
                .map(rows -> {
                    List<Payment> out = new ArrayList<>();
                    rows.forEach(row -> out.add(from(row)));
                    return out;
                });
    }

    /** Deletes a payment that never reached the PSP (still PROCESSING); returns whether it did. */
    public Uni<Boolean> deleteNeverSent(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery("DELETE FROM payments WHERE id = $1 AND merchant_id = $2 AND status = 'PROCESSING'")
                .execute(Tuple.of(id, merchantId))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<List<Refund>> refundsOf(SqlClient client, UUID merchantId, UUID paymentId) {
        return client.preparedQuery(
                        """
                        SELECT id, payment_id, amount, currency, status, created_at FROM refunds
                         WHERE payment_id = $1 AND merchant_id = $2 ORDER BY created_at, id""")
                .execute(Tuple.of(paymentId, merchantId))
                .map(rows -> {
                    List<Refund> out = new ArrayList<>();
                    rows.forEach(row -> out.add(refund(row)));
                    return out;
                });
    }

    public Uni<Refund> findRefund(SqlClient client, UUID merchantId, UUID refundId) {
        return client.preparedQuery(
                        """
                        SELECT id, payment_id, amount, currency, status, created_at FROM refunds
                         WHERE id = $1 AND merchant_id = $2""")
                .execute(Tuple.of(refundId, merchantId))
                .map(rows ->
                        rows.rowCount() == 0 ? null : refund(rows.iterator().next()));
    }

    private static Payment single(RowSet<Row> rows) {
        return from(rows.iterator().next());
    }

    public static Payment from(Row row) {
        return new Payment(
                row.getUUID("id"),
                row.getUUID("merchant_id"),
                row.getString("order_id"),
                row.getLong("amount"),
                row.getString("currency"),
                PaymentStatus.valueOf(row.getString("status")),
                row.getLong("refunded_amount"),
                row.getString("psp_reference"),
                row.getString("decline_code"),
                row.getOffsetDateTime("created_at").toInstant());
    }

    static Refund refund(Row row) {
        return new Refund(
                row.getUUID("id"),
                row.getUUID("payment_id"),
                row.getLong("amount"),
                row.getString("currency"),
                row.getString("status"),
                row.getOffsetDateTime("created_at").toInstant());
    }
}
