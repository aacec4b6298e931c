package com.payments.api.pspevents;

import com.payments.api.Payment;
import com.payments.api.common.OutboxRow;
import com.payments.api.payment.PaymentRepository;
import com.payments.contracts.SqlResource;
import com.payments.contracts.sql.RefundSettlement;
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

    private static final String STORE_IF_PAYMENT_SETTLED =
            SqlResource.load(PspEventRepository.class, "psp-event-settled.sql");
    private static final String STORE_REFUND_EVENT = SqlResource.load(PspEventRepository.class, "psp-refund-event.sql");

    /**
     * Stores the event as processed, outcome {@code no_change}, in one statement, when the payment is in the final
     * {@code status} with the event's money (psp-event-settled.sql). Answers {@code no_change} when stored now,
     * {@link PspEventHandler#DUPLICATE} when a copy was stored before, a null item when the payment is not so (nothing
     * stored).
     */
    public Uni<String> storeIfPaymentSettled(
            SqlClient client, PspEvent event, String payloadJson, UUID paymentId, String status) {
        return client.preparedQuery(STORE_IF_PAYMENT_SETTLED)
                .execute(Tuple.from(Arrays.asList(
                        event.eventId(),
                        event.providerType(),
                        payloadJson,
                        paymentId,
                        status,
                        event.amount() > 0 ? event.amount() : null,
                        event.currency())))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    if (!row.getBoolean("settled")) {
                        return null;
                    }
                    return row.getBoolean("stored") ? "no_change" : PspEventHandler.DUPLICATE;
                });
    }

    /**
     * The event of a refund's final outcome, in one statement when the refund agrees with it (psp-refund-event.sql):
     * already so, stored as {@code no_change}; PENDING, stored as {@code applied} and settled as {@code settlement}
     * says. Answers the outcome stored, {@link PspEventHandler#DUPLICATE} when a copy was stored before, a null item
     * when the refund does not agree (nothing stored or changed).
     */
    public Uni<String> storeRefundEvent(
            SqlClient client, PspEvent event, String payloadJson, RefundSettlement settlement) {
        return client.preparedQuery(STORE_REFUND_EVENT)
                .execute(Tuple.from(Arrays.asList(
                        event.eventId(),
                        event.providerType(),
                        payloadJson,
                        settlement.refundId(),
                        settlement.status(),
                        event.amount() > 0 ? event.amount() : null,
                        event.currency(),
                        settlement.pspReference(),
                        settlement.failureCode(),
                        settlement.actor(),
                        settlement.headersJson().encode())))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    if (!row.getBoolean("agrees")) {
                        return null;
                    }
                    String outcome = row.getString("outcome");
                    if (outcome == null) {
                        return PspEventHandler.DUPLICATE;
                    }
                    if (outcome.equals("applied") && !Boolean.TRUE.equals(row.getBoolean("settled"))) {
                        // cannot happen: the statement held the PENDING refund's lock
                        throw new IllegalStateException(
                                "refund " + settlement.refundId() + " stored as applied but not settled");
                    }
                    return outcome;
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
