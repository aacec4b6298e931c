package com.payments.api.webhooks;

import com.payments.api.Payment;
import com.payments.api.capture.PaymentRepository;
import com.payments.api.common.Metadata;
import com.payments.api.common.OutboxRow;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.UUID;

/**
 * psp_webhook_events (stored once by the PSP's event id) and the SQL of applying an event: refund outcomes (guarded on
 * PENDING, the same statements as refunds-worker's outcome transaction) and the payment of a dispute.
 */
@ApplicationScoped
public class WebhookRepository {

    /** A refund locked for the webhook's transaction. */
    public record LockedRefund(
            UUID id,
            UUID paymentId,
            UUID merchantId,
            long amount,
            String currency,
            String status,
            Map<String, String> metadata) {

        boolean pending() {
            return status.equals("PENDING");
        }
    }

    /** Stores the event unless its id is known; true when this call stored it (a concurrent copy waits, then false). */
    public Uni<Boolean> insert(SqlClient client, String eventId, String type, String payloadJson) {
        return client.preparedQuery(
                        """
                        INSERT INTO psp_webhook_events (event_id, type, payload) VALUES ($1, $2, $3::text::jsonb)
                        ON CONFLICT (event_id) DO NOTHING""")
                .execute(Tuple.of(eventId, type, payloadJson))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<Void> processed(SqlClient client, String eventId, String outcome) {
        return client.preparedQuery(
                        "UPDATE psp_webhook_events SET processed_at = now(), outcome = $2 WHERE event_id = $1")
                .execute(Tuple.of(eventId, outcome))
                .replaceWithVoid();
    }

    /** The refund, locked until the transaction ends; null when there is none. */
    public Uni<LockedRefund> lockRefund(SqlClient client, UUID refundId) {
        return client.preparedQuery(
                        """
                        SELECT id, payment_id, merchant_id, amount, currency, status, metadata
                          FROM refunds WHERE id = $1 FOR UPDATE""")
                .execute(Tuple.of(refundId))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new LockedRefund(
                            row.getUUID("id"),
                            row.getUUID("payment_id"),
                            row.getUUID("merchant_id"),
                            row.getLong("amount"),
                            row.getString("currency"),
                            row.getString("status"),
                            Metadata.of(row.getJsonObject("metadata")));
                });
    }

    /** PENDING → SUCCEEDED or FAILED; false when the refund was no longer PENDING (then nothing else may change). */
    public Uni<Boolean> settleRefund(
            SqlClient client, UUID refundId, String status, String pspReference, String failureCode) {
        return client.preparedQuery(
                        """
                        UPDATE refunds SET status = $2, psp_reference = coalesce($3, psp_reference),
                                           failure_code = coalesce($4, failure_code), completed_at = now(),
                                           next_attempt_at = NULL, last_error = NULL
                         WHERE id = $1 AND status = 'PENDING'""")
                .execute(Tuple.of(refundId, status, pspReference, failureCode))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Gives back a failed refund's reservation; the CHECKs on payments stop a release below zero. */
    public Uni<Void> releaseReservation(SqlClient client, LockedRefund refund) {
        return client.preparedQuery("UPDATE payments SET refunded_amount = refunded_amount - $2 WHERE id = $1")
                .execute(Tuple.of(refund.paymentId(), refund.amount()))
                .map(rows -> {
                    if (rows.rowCount() != 1) {
                        throw new IllegalStateException("No payment " + refund.paymentId() + " to release a refund on");
                    }
                    return null;
                });
    }

    /** Books a succeeded refund as refunds-worker does (one REFUND ledger transaction per refund id). */
    public Uni<Void> bookRefund(SqlClient client, LockedRefund refund) {
        return client.preparedQuery(
                        """
                        SELECT book_ledger_transaction('REFUND', 'merchant_payable', 'psp_receivable', $1, $2,
                                                       'refund of payment ' || $3::text, $4, $5, false)""")
                .execute(Tuple.of(
                        refund.id().toString(),
                        refund.merchantId(),
                        refund.paymentId().toString(),
                        refund.amount(),
                        refund.currency()))
                .replaceWithVoid();
    }

    /** Resolves the refund's open items about it being stuck PENDING (it is final now: nothing is left to decide). */
    public Uni<Void> resolveStuckRefundItems(SqlClient client, UUID refundId, String resolution) {
        return client.preparedQuery(
                        """
                        UPDATE operations_queue
                           SET status = 'RESOLVED', resolved_at = now(),
                               details = details || jsonb_build_object('resolution', $2::text)
                         WHERE subject_type = 'refund' AND subject_id = $1
                           AND reason IN ('refund_pending_too_long', 'refund_rejected_by_psp') AND status = 'OPEN'""")
                .execute(Tuple.of(refundId.toString(), resolution))
                .replaceWithVoid();
    }

    /** The payment the PSP knows under this id (its charge or PaymentIntent), locked; null when none. */
    public Uni<Payment> lockPaymentByPspReference(SqlClient client, String pspReference) {
        return client.preparedQuery("SELECT %s FROM payments WHERE psp_reference = $1 FOR UPDATE"
                        .formatted(PaymentRepository.COLUMNS))
                .execute(Tuple.of(pspReference))
                .map(rows -> rows.rowCount() == 0
                        ? null
                        : PaymentRepository.from(rows.iterator().next()));
    }

    /** One outbox row, keyed by the payment id (outbox-relay publishes it). */
    public Uni<Void> enqueue(SqlClient client, UUID paymentId, OutboxRow row) {
        return client.preparedQuery("SELECT enqueue_event($1, $2, $3, $4, $5, $6)")
                .execute(Tuple.of(
                        row.eventId(),
                        row.eventType(),
                        row.topic(),
                        paymentId.toString(),
                        new JsonObject(row.payloadJson()),
                        new JsonObject(row.headersJson())))
                .replaceWithVoid();
    }
}
