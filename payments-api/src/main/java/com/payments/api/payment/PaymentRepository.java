package com.payments.api.payment;

import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.Refund;
import com.payments.api.common.Metadata;
import com.payments.api.common.OutboxRow;
import com.payments.api.common.Page;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.config.ApiConfig;
import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/** SQL on payments (and the refunds read with them). Every merchant-facing query is scoped by merchant. */
@ApplicationScoped
public class PaymentRepository {
    /** How long a payment claimed for a PSP call waits before the resolver treats the call as stuck. */
    private final Duration stuckAfter;

    public PaymentRepository(ApiConfig config) {
        this.stuckAfter = config.psp().stuckAfter();
    }

    /**
     * A payment as read under its row lock; {@code capturedAmount} that of a manual capture (CAPTURING, CAPTURED), else
     * null.
     */
    public record Locked(
            UUID id, PaymentStatus status, int attempts, long amount, String currency, Long capturedAmount) {

        /** The money a charge of it takes at the PSP: a manual capture's captured amount, else the whole amount. */
        public long charged() {
            return capturedAmount != null ? capturedAmount : amount;
        }
    }

    public static final String COLUMNS =
            "id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at,"
                    + " metadata, capture_method, captured_amount";
    static final String REFUND_COLUMNS = "id, payment_id, amount, currency, status, created_at, metadata";

    /**
     * A payment to insert, claiming the merchant's Idempotency-Key: PROCESSING, or AUTHORIZING when its
     * {@code captureMethod} is MANUAL.
     */
    public record NewPayment(
            UUID id,
            UUID merchantId,
            String orderId,
            long amount,
            String currency,
            String source,
            Map<String, String> metadata,
            String idempotencyKey,
            byte[] requestHash,
            String captureMethod) {}

    private static final String INSERT_PROCESSING = SqlResource.load(PaymentRepository.class, "capture-claim.sql");

    /**
     * Claims each payment's Idempotency-Key and inserts the payment PROCESSING, for all of them in one statement
     * (so one atomic round trip): a key's {@code INSERT ... ON CONFLICT DO NOTHING} waits for a concurrent claim of
     * the same key to end and then does nothing, and so does that payment's insert; of two payments with one key in
     * the same list, one claims it. Keys are claimed in (merchant, key) order, so two such statements never
     * wait on each other's keys crosswise. {@code next_attempt_at} tells the resolver when to treat the payment as
     * stuck (the process died before the outcome): {@code payments.psp.stuck-after} from now.
     *
     * @return one element per payment, in order: the inserted payment, or null when its key was taken
     */
    public Uni<List<Payment>> insertProcessingClaimingKeys(SqlClient client, List<NewPayment> newPayments) {
        return client.preparedQuery(INSERT_PROCESSING)
                .execute(Tuple.from(List.of(
                        column(newPayments, NewPayment::id, UUID[]::new),
                        column(newPayments, NewPayment::merchantId, UUID[]::new),
                        column(newPayments, NewPayment::orderId, String[]::new),
                        column(newPayments, NewPayment::amount, Long[]::new),
                        column(newPayments, NewPayment::currency, String[]::new),
                        column(newPayments, NewPayment::source, String[]::new),
                        column(newPayments, NewPayment::idempotencyKey, String[]::new),
                        column(newPayments, p -> Buffer.buffer(p.requestHash()), Buffer[]::new),
                        (double) stuckAfter.toSeconds(),
                        column(newPayments, p -> Metadata.json(p.metadata()), String[]::new),
                        column(newPayments, NewPayment::captureMethod, String[]::new))))
                .map(rows -> {
                    Map<UUID, Payment> inserted = new HashMap<>();
                    rows.forEach(row -> inserted.put(row.getUUID("id"), from(row)));
                    return newPayments.stream().map(p -> inserted.get(p.id())).toList();
                });
    }

    /**
     * A PSP outcome to record for a payment: the guarded change to {@code status}, the outbox row ({@code event},
     * may be null), the answer to complete the payment's idempotency key with, and the PSP call it came from
     * ({@code pspCall}, null when it came from elsewhere or the caller records its calls itself).
     */
    public record OutcomeRow(
            UUID paymentId,
            PaymentStatus status,
            String pspReference,
            String declineCode,
            String lastError,
            OutboxRow event,
            int responseStatus,
            byte[] responseBody,
            PspCall pspCall) {

        public OutcomeRow withPspCall(PspCall call) {
            return new OutcomeRow(
                    paymentId, status, pspReference, declineCode, lastError, event, responseStatus, responseBody, call);
        }
    }

    private static final String RECORD_OUTCOME = SqlResource.load(PaymentRepository.class, "record-outcome.sql");
    private static final String UNDO_MOVE = SqlResource.load(PaymentRepository.class, "payment-undo-move.sql");

    /**
     * Records PSP outcomes, for all of them in one statement (one atomic round trip): for each payment the guarded
     * state change (only from the states the transition table allows; {@code actor}, one for the statement, lands in
     * payment_transitions via the trigger), and only if it changed the row: a capture's ledger transaction
     * (psp_receivable +amount, merchant_payable -amount, through {@code book_ledger_transactions}), the outbox row
     * ({@code enqueue_events}) and the
     * completion of the payment's idempotency key. A payment that was not in such a state (another path recorded an
     * outcome first) gets nothing written but its PSP call: each row's {@code pspCall}, if any, goes to
     * {@code psp_calls} in the same statement.
     *
     * @return one element per outcome, in order: whether it moved its payment
     */
    public Uni<List<Boolean>> recordOutcomes(SqlClient client, String actor, List<OutcomeRow> outcomes) {
        return client.preparedQuery(RECORD_OUTCOME)
                .execute(Tuple.from(Arrays.asList(
                        column(outcomes, OutcomeRow::paymentId, UUID[]::new),
                        column(outcomes, o -> o.status().name(), String[]::new),
                        column(outcomes, OutcomeRow::pspReference, String[]::new),
                        column(outcomes, OutcomeRow::declineCode, String[]::new),
                        column(outcomes, OutcomeRow::lastError, String[]::new),
                        column(outcomes, o -> RECORDABLE_FROM.get(o.status()), String[]::new),
                        eventColumn(outcomes, OutboxRow::eventId, UUID[]::new),
                        eventColumn(outcomes, OutboxRow::eventType, String[]::new),
                        eventColumn(outcomes, OutboxRow::topic, String[]::new),
                        eventColumn(outcomes, OutboxRow::payloadJson, String[]::new),
                        eventColumn(outcomes, OutboxRow::headersJson, String[]::new),
                        column(outcomes, OutcomeRow::responseStatus, Integer[]::new),
                        column(outcomes, o -> Buffer.buffer(o.responseBody()), Buffer[]::new),
                        actor,
                        callColumn(outcomes, PspCall::kind, String[]::new),
                        callColumn(outcomes, PspCall::attempt, Integer[]::new),
                        callColumn(outcomes, PspCall::startedAtUtc, OffsetDateTime[]::new),
                        callColumn(outcomes, PspCall::durationMs, Integer[]::new),
                        callColumn(outcomes, PspCall::outcome, String[]::new))))
                .map(rows -> {
                    Set<UUID> moved = new HashSet<>();
                    rows.forEach(row -> moved.add(row.getUUID("id")));
                    return outcomes.stream()
                            .map(o -> moved.contains(o.paymentId()))
                            .toList();
                });
    }

    /** One array parameter of a statement that takes its rows as arrays: {@code field} of every row, in order. */
    private static <R, T> T[] column(List<R> rows, Function<R, T> field, IntFunction<T[]> array) {
        return rows.stream().map(field).toArray(array);
    }

    /** An outbox column of every outcome; null for an outcome without an event. */
    private static <T> T[] eventColumn(List<OutcomeRow> rows, Function<OutboxRow, T> field, IntFunction<T[]> array) {
        return column(rows, o -> o.event() == null ? null : field.apply(o.event()), array);
    }

    /** A PSP call column of every outcome; null for an outcome without a call. */
    private static <T> T[] callColumn(List<OutcomeRow> rows, Function<PspCall, T> field, IntFunction<T[]> array) {
        return column(rows, o -> o.pspCall() == null ? null : field.apply(o.pspCall()), array);
    }

    /**
     * For each target, the states {@link #recordOutcomes} may move a payment to it from, comma-separated (the SQL
     * splits them): the PSP outcomes of the state machine. A pending manual state "to itself" records an outcome still
     * unknown (last_error, the resolver's next attempt). Starting a capture or a cancel and undoing it are
     * {@link #startMove} and {@link #undoMove}.
     */
    private static final Map<PaymentStatus, String> RECORDABLE_FROM = new EnumMap<>(PaymentStatus.class);

    static {
        Map<PaymentStatus, List<PaymentStatus>> from = Map.of(
                PaymentStatus.CAPTURED,
                        List.of(PaymentStatus.PROCESSING, PaymentStatus.UNKNOWN, PaymentStatus.CAPTURING),
                PaymentStatus.FAILED,
                        List.of(PaymentStatus.PROCESSING, PaymentStatus.UNKNOWN, PaymentStatus.AUTHORIZING),
                PaymentStatus.UNKNOWN, List.of(PaymentStatus.PROCESSING),
                PaymentStatus.AUTHORIZED, List.of(PaymentStatus.AUTHORIZING),
                PaymentStatus.AUTHORIZING, List.of(PaymentStatus.AUTHORIZING),
                PaymentStatus.CAPTURING, List.of(PaymentStatus.CAPTURING),
                PaymentStatus.CANCELING, List.of(PaymentStatus.CANCELING),
                PaymentStatus.CANCELED, List.of(PaymentStatus.CANCELING),
                PaymentStatus.EXPIRING, List.of(PaymentStatus.EXPIRING),
                PaymentStatus.EXPIRED, List.of(PaymentStatus.EXPIRING));
        for (PaymentStatus target : PaymentStatus.values()) {
            RECORDABLE_FROM.put(
                    target,
                    String.join(
                            ",",
                            from.getOrDefault(target, List.of()).stream()
                                    .map(Enum::name)
                                    .toList()));
        }
    }

    /**
     * A capture or cancel that won its payment: the payment as it left AUTHORIZED, its resolver attempts then, and the
     * Idempotency-Key the request claimed.
     */
    public record Started(Payment payment, int attempts, String key) {}

    /**
     * Starts a capture ({@code to} CAPTURING, {@code capturedAmount} set) or a cancel ({@code to} CANCELING) of the
     * merchant's AUTHORIZED payment, in one transaction: claims the merchant's Idempotency-Key for it (in progress,
     * resource the payment), then the guarded {@code UPDATE ... WHERE status = 'AUTHORIZED'}. Of racing requests with
     * different keys exactly one finds the row AUTHORIZED (the others wait for its row lock and then find it moved);
     * only it may call the PSP. {@code next_attempt_at} tells the resolver when the call is stuck
     * ({@code payments.psp.stuck-after} from now).
     *
     * @return the started move; null when the key was taken (the caller reads it back); fails with
     *     {@code notAuthorized} when the payment is not AUTHORIZED (then the key is not kept: nothing was written)
     */
    public Uni<Started> startMove(
            Pool pool,
            UUID merchantId,
            UUID id,
            String key,
            byte[] requestHash,
            PaymentStatus to,
            Long capturedAmount,
            String actor,
            Supplier<RuntimeException> notAuthorized) {
        return pool.withTransaction(conn -> conn.preparedQuery(
                        """
                        INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
                        VALUES ($1, $2, $3, 'payment', $4) ON CONFLICT DO NOTHING RETURNING key""")
                .execute(Tuple.of(merchantId, key, Buffer.buffer(requestHash), id))
                .flatMap(claimed -> claimed.rowCount() == 0
                        ? Uni.createFrom().<Started>nullItem()
                        : conn.preparedQuery(
                                        """
                                        UPDATE payments
                                           SET status = $3, captured_amount = $4, last_error = NULL,
                                               next_attempt_at = now() + make_interval(secs => $5)
                                         WHERE id = $1 AND merchant_id = $2 AND status = 'AUTHORIZED'
                                           AND set_config('payments.actor', $6, true) IS NOT NULL
                                        RETURNING %s, attempts"""
                                                .formatted(COLUMNS))
                                .execute(Tuple.from(Arrays.asList(
                                        id,
                                        merchantId,
                                        to.name(),
                                        capturedAmount,
                                        (double) stuckAfter.toSeconds(),
                                        actor)))
                                .map(rows -> {
                                    if (rows.rowCount() == 0) {
                                        throw notAuthorized.get();
                                    }
                                    Row row = rows.iterator().next();
                                    return new Started(from(row), row.getInteger("attempts"), key);
                                })));
    }

    /**
     * Undoes a started capture or cancel that the PSP certainly did not make (never sent, or refused): the payment
     * moves from {@code from} to {@code to} (AUTHORIZED, or EXPIRED when the PSP's authorization lapsed) without a
     * captured amount, its in-progress key is released (the refusal is not stored: the merchant may retry), a key
     * completed before the outcome (202) becomes final, {@code event}, if any, is enqueued and {@code pspCall}, if any,
     * goes to {@code psp_calls} (whether or not the move is undone: the call was made), in one statement.
     * {@code attempts}, when not null, must still be the payment's: a resolver that claimed it meanwhile may have sent
     * the call.
     *
     * @return whether it undid it (false: the payment had moved on, or a resolver claimed it)
     */
    public Uni<Boolean> undoMove(
            SqlClient client,
            UUID id,
            PaymentStatus from,
            PaymentStatus to,
            Integer attempts,
            String lastError,
            OutboxRow event,
            String actor,
            PspCall pspCall) {
        return client.preparedQuery(UNDO_MOVE)
                .execute(Tuple.from(Arrays.asList(
                        id,
                        from.name(),
                        to.name(),
                        attempts,
                        lastError,
                        actor,
                        event == null ? null : event.eventId(),
                        event == null ? null : event.eventType(),
                        event == null ? null : event.topic(),
                        event == null ? null : event.payloadJson(),
                        event == null ? null : event.headersJson(),
                        pspCall == null ? null : pspCall.kind(),
                        pspCall == null ? null : pspCall.attempt(),
                        pspCall == null ? null : pspCall.startedAtUtc(),
                        pspCall == null ? null : pspCall.durationMs(),
                        pspCall == null ? null : pspCall.outcome())))
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

    /** A page of the merchant's payments, newest first; only those of {@code orderId} unless it is null. */
    public Uni<Page.Slice<Payment>> page(SqlClient client, UUID merchantId, String orderId, Page page) {
        return page.read(client, "payments", COLUMNS, merchantId, "order_id", orderId, null, PaymentRepository::from);
    }

    /** A page of the merchant's refunds, newest first; only those of {@code paymentId} unless it is null. */
    public Uni<Page.Slice<Refund>> refundPage(SqlClient client, UUID merchantId, UUID paymentId, Page page) {
        return page.read(
                client,
                "refunds",
                REFUND_COLUMNS,
                merchantId,
                "payment_id",
                paymentId,
                null,
                PaymentRepository::refund);
    }

    /**
     * Drops a payment whose charge never reached the PSP, with its in-progress key and the replays recorded for it,
     * so that the merchant may retry with the key: only while it is PROCESSING and no resolver ever claimed it
     * ({@code attempts = 0}; a claim may have sent the charge since). The statement waits for a concurrent claim's
     * row lock and then re-checks.
     *
     * @return whether it dropped them (false: the payment stays, its outcome unknown)
     */
    public Uni<Boolean> dropNeverSent(SqlClient client, UUID merchantId, UUID id, String idempotencyKey) {
        return client.preparedQuery(
                        """
                        WITH dropped AS (
                            DELETE FROM payments
                             WHERE id = $1 AND merchant_id = $2 AND status IN ('PROCESSING', 'AUTHORIZING')
                               AND attempts = 0
                            RETURNING id),
                        released AS (
                            DELETE FROM idempotency_keys k USING dropped
                             WHERE k.merchant_id = $2 AND k.key = $3 AND k.resource_id = dropped.id
                               AND k.status = 'IN_PROGRESS'),
                        replays AS (
                            DELETE FROM idempotency_replays r USING dropped WHERE r.resource_id = dropped.id)
                        SELECT count(*) FROM dropped""")
                .execute(Tuple.of(id, merchantId, idempotencyKey))
                .map(rows -> rows.iterator().next().getLong(0) == 1);
    }

    public Uni<List<Refund>> refundsOf(SqlClient client, UUID merchantId, UUID paymentId) {
        return client.preparedQuery(
                        """
                        SELECT %s FROM refunds
                         WHERE payment_id = $1 AND merchant_id = $2 ORDER BY created_at, id"""
                                .formatted(REFUND_COLUMNS))
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
                        SELECT %s FROM refunds
                         WHERE id = $1 AND merchant_id = $2"""
                                .formatted(REFUND_COLUMNS))
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
                row.getOffsetDateTime("created_at").toInstant(),
                Metadata.of(row.getJsonObject("metadata")),
                row.getString("capture_method"),
                row.getLong("captured_amount"));
    }

    static Refund refund(Row row) {
        return new Refund(
                row.getUUID("id"),
                row.getUUID("payment_id"),
                row.getLong("amount"),
                row.getString("currency"),
                row.getString("status"),
                row.getOffsetDateTime("created_at").toInstant(),
                Metadata.of(row.getJsonObject("metadata")));
    }

    /**
     * Re-reads a payment under its row lock (in the caller's transaction), for the resolver and the webhooks; null when
     * there is none.
     */
    public static Uni<Locked> lock(SqlClient client, UUID id) {
        return client.preparedQuery(
                        "SELECT id, status, attempts, amount, currency, captured_amount FROM payments WHERE id = $1"
                                + " FOR UPDATE")
                .execute(Tuple.of(id))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new Locked(
                            row.getUUID("id"),
                            PaymentStatus.valueOf(row.getString("status")),
                            row.getInteger("attempts"),
                            row.getLong("amount"),
                            row.getString("currency"),
                            row.getLong("captured_amount"));
                });
    }
}
