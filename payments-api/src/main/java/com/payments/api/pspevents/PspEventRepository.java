package com.payments.api.pspevents;

import com.payments.api.Payment;
import com.payments.api.common.OutboxRow;
import com.payments.api.payment.PaymentRepository;
import com.payments.contracts.SqlResource;
import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.UUID;

/**
 * psp_webhook_events (stored once by the PSP's event id) and the SQL of applying an event: the refund's lock and the
 * payment of a dispute (a refund is settled by contracts' {@code RefundSettlement}, as in refunds-worker).
 */
@ApplicationScoped
public class PspEventRepository {

    /** A refund locked for the webhook's transaction. */
    public record LockedRefund(UUID id, UUID paymentId, UUID merchantId, long amount, String currency, String status) {

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

    private static final String STORE_IF_SETTLED = SqlResource.load(PspEventRepository.class, "psp-event-settled.sql");
    private static final String STORE_IF_PAYMENT_SETTLED =
            STORE_IF_SETTLED.formatted("payments", "coalesce(captured_amount, amount)");
    private static final String STORE_IF_REFUND_SETTLED = STORE_IF_SETTLED.formatted("refunds", "amount");

    /**
     * Stores the event as processed, outcome {@code no_change}, in one statement, when the payment is in the final
     * {@code status} with the event's money (psp-event-settled.sql). True: stored now; false: a copy was stored
     * before; a null item: the payment is not so (nothing stored).
     */
    public Uni<Boolean> storeIfPaymentSettled(
            SqlClient client, PspEvent event, String payloadJson, UUID paymentId, String status) {
        return storeIfSettled(client, STORE_IF_PAYMENT_SETTLED, event, payloadJson, paymentId, status);
    }

    /** {@link #storeIfPaymentSettled} for a refund in the final {@code status}. */
    public Uni<Boolean> storeIfRefundSettled(
            SqlClient client, PspEvent event, String payloadJson, UUID refundId, String status) {
        return storeIfSettled(client, STORE_IF_REFUND_SETTLED, event, payloadJson, refundId, status);
    }

    private static Uni<Boolean> storeIfSettled(
            SqlClient client, String sql, PspEvent event, String payloadJson, UUID subject, String status) {
        return client.preparedQuery(sql)
                .execute(Tuple.from(Arrays.asList(
                        event.eventId(),
                        event.providerType(),
                        payloadJson,
                        subject,
                        status,
                        event.amount() > 0 ? event.amount() : null,
                        event.currency())))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return row.getBoolean("settled") ? row.getBoolean("stored") : null;
                });
    }

    /** The refund, locked until the transaction ends; null when there is none. */
    public Uni<LockedRefund> lockRefund(SqlClient client, UUID refundId) {
        return client.preparedQuery(
                        """
                        SELECT id, payment_id, merchant_id, amount, currency, status
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
                            row.getString("status"));
                });
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
