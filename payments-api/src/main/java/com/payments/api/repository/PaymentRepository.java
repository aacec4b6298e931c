package com.payments.api.repository;

import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.Refund;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
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

    private static final String INSERT_PROCESSING =
            """
            WITH claim AS (
                INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
                VALUES ($2, $8, $9, 'payment', $1) ON CONFLICT DO NOTHING RETURNING resource_id)
            INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, next_attempt_at)
            SELECT resource_id, $2::uuid, $3::text, $4::bigint, $5::text, $6::text, now() + make_interval(secs => $7::float8)
              FROM claim
            RETURNING %s"""
                    .formatted(COLUMNS);

    /**
     * Claims the merchant's Idempotency-Key for a new payment and inserts the payment PROCESSING, in one statement
     * (so one atomic round trip): the key's {@code INSERT ... ON CONFLICT DO NOTHING} waits for a concurrent claim
     * of the same key to end and then does nothing, and so does the payment insert. Null when the key was taken.
     * {@code next_attempt_at} tells the resolver when to treat the payment as stuck (the process died before the
     * outcome).
     */
    public Uni<Payment> insertProcessingClaimingKey(
            SqlClient client,
            UUID id,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String source,
            Duration stuckAfter,
            String idempotencyKey,
            byte[] requestHash) {
        return client.preparedQuery(INSERT_PROCESSING)
                .execute(Tuple.from(List.of(
                        id,
                        merchantId,
                        orderId,
                        amount,
                        currency,
                        source,
                        (double) stuckAfter.toSeconds(),
                        idempotencyKey,
                        Buffer.buffer(requestHash))))
                .map(rows -> rows.rowCount() == 0 ? null : single(rows));
    }

    private static final String RECORD_OUTCOME =
            """
            WITH moved AS (
                UPDATE payments
                   SET status = $2,
                       psp_reference = COALESCE($3, psp_reference),
                       decline_code = $4,
                       last_error = $5,
                       captured_at = CASE WHEN $2 = 'CAPTURED' THEN now() ELSE captured_at END,
                       next_attempt_at = CASE WHEN $2 = 'UNKNOWN' THEN now() ELSE NULL END
                 WHERE id = $1 AND status = ANY($6) AND set_config('payments.actor', $7, true) IS NOT NULL
                 RETURNING id, merchant_id, amount, currency, status),
            ledger AS (
                INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
                SELECT 'CAPTURE', id::text, merchant_id, 'payment captured' FROM moved WHERE status = 'CAPTURED'
                RETURNING id),
            entries AS (
                INSERT INTO ledger_entries (transaction_id, account, amount, currency)
                SELECT ledger.id, e.account, e.sign * moved.amount, moved.currency
                  FROM ledger, moved, (VALUES ('psp_receivable', 1), ('merchant_payable', -1)) AS e (account, sign)),
            event AS (
                INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
                SELECT $8::uuid, $9::text, $10::text, id::text, $11::text::jsonb, $12::text::jsonb
                  FROM moved WHERE $8::uuid IS NOT NULL),
            completed AS (
                UPDATE idempotency_keys
                   SET status = 'COMPLETED', response_status = $13, response_body = $14, completed_at = now()
                 WHERE resource_type = 'payment' AND resource_id = $1 AND status = 'IN_PROGRESS'
                   AND EXISTS (SELECT 1 FROM moved))
            SELECT count(*) FROM moved""";

    /**
     * Records a PSP outcome in one statement (one atomic round trip): the guarded state change (only from the
     * states the transition table allows; {@code actor} lands in payment_transitions via the trigger), and only if
     * it changed the row: a capture's two ledger entries (psp_receivable +amount, merchant_payable -amount; the
     * deferred trigger checks the sum), the outbox row ({@code event} may be null) and the completion of the
     * payment's idempotency key with {@code response}. False when the payment was not in such a state (another
     * path recorded an outcome first): then nothing was written.
     */
    public Uni<Boolean> recordOutcome(
            SqlClient client,
            UUID id,
            PaymentStatus target,
            String pspReference,
            String declineCode,
            String lastError,
            String actor,
            OutboxRow event,
            int responseStatus,
            byte[] responseBody) {
        String[] from = target.allowedSources().stream().map(Enum::name).toArray(String[]::new);
        return client.preparedQuery(RECORD_OUTCOME)
                .execute(Tuple.from(Arrays.asList(
                        id,
                        target.name(),
                        pspReference,
                        declineCode,
                        lastError,
                        from,
                        actor,
                        event == null ? null : event.eventId(),
                        event == null ? null : event.eventType(),
                        event == null ? null : event.topic(),
                        event == null ? null : event.payloadJson(),
                        event == null ? null : event.headersJson(),
                        responseStatus,
                        Buffer.buffer(responseBody))))
                .map(rows -> rows.iterator().next().getLong(0) == 1);
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
