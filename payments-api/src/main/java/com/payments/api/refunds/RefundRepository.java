package com.payments.api.refunds;

import com.payments.api.common.Metadata;
import com.payments.api.common.OutboxRow;
import com.payments.api.idempotency.IdempotencyRepository;
import com.payments.api.idempotency.IdempotencyRepository.StoredKey;
import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;

/** SQL of the refund reservation (docs/architecture.md §3): what a request finds, and the reservation with its effects. */
@ApplicationScoped
public class RefundRepository {

    /**
     * What a refund request finds before it writes: this merchant's payment (null status: no such payment) and the
     * merchant's idempotency key if already used (null: free).
     */
    public record Found(String paymentStatus, String currency, String pspReference, StoredKey key) {}

    /** Reads the payment and the key in one round trip. */
    public Uni<Found> find(SqlClient client, UUID merchantId, UUID paymentId, String idempotencyKey) {
        return client.preparedQuery(
                        """
                        SELECT p.status AS payment_status, p.currency, p.psp_reference, %s
                          FROM (VALUES (1)) AS one (x)
                          LEFT JOIN payments p ON p.id = $1 AND p.merchant_id = $2
                          LEFT JOIN idempotency_keys k ON k.merchant_id = $2 AND k.key = $3"""
                                .formatted(IdempotencyRepository.KEY_COLUMNS))
                .execute(Tuple.of(paymentId, merchantId, idempotencyKey))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return new Found(
                            row.getString("payment_status"),
                            row.getString("currency"),
                            row.getString("psp_reference"),
                            IdempotencyRepository.storedKey(row));
                });
    }

    /** One refund reservation: the payment to reserve on, and what the reservation writes when it succeeds. */
    public record Reservation(
            UUID merchantId,
            UUID paymentId,
            UUID refundId,
            long amount,
            String currency,
            String pspReference,
            String reason,
            Map<String, String> metadata,
            OutboxRow command,
            String idempotencyKey,
            byte[] requestHash,
            byte[] responseBody) {}

    private static final String RESERVE = SqlResource.load(RefundRepository.class, "refund-reserve.sql");

    /**
     * The conditional reservations and their effects in one statement (one atomic round trip), one row per
     * reservation: adds {@code amount} to refunded_amount only on this merchant's CAPTURED payment and only if the
     * total stays within the captured amount (the row lock serializes concurrent reservations of one payment; each
     * re-checks the condition on the committed value); then the PENDING refund, its {@code refund-commands} outbox
     * row (key = payment id, through {@code enqueue_events}) and the merchant's idempotency key, stored completed
     * with the 202 answer. Answers, in order, whether each was reserved (false: nothing of it written). Two reservations of one payment must not share
     * a statement (an UPDATE changes a row once). A key taken meanwhile by a concurrent request fails the statement
     * with a unique violation of {@code idempotency_keys_pkey} and rolls all of it back.
     */
    public Uni<List<Boolean>> reserve(SqlClient client, List<Reservation> reservations) {
        return client.preparedQuery(RESERVE)
                .execute(Tuple.from(Arrays.asList(
                        column(reservations, Reservation::paymentId, UUID[]::new),
                        column(reservations, Reservation::merchantId, UUID[]::new),
                        column(reservations, Reservation::amount, Long[]::new),
                        column(reservations, Reservation::refundId, UUID[]::new),
                        column(reservations, Reservation::currency, String[]::new),
                        column(reservations, Reservation::pspReference, String[]::new),
                        column(reservations, Reservation::reason, String[]::new),
                        column(reservations, r -> r.command().eventId(), UUID[]::new),
                        column(reservations, r -> r.command().eventType(), String[]::new),
                        column(reservations, r -> r.command().topic(), String[]::new),
                        column(reservations, r -> r.command().payloadJson(), String[]::new),
                        column(reservations, r -> r.command().headersJson(), String[]::new),
                        column(reservations, Reservation::idempotencyKey, String[]::new),
                        column(reservations, r -> Buffer.buffer(r.requestHash()), Buffer[]::new),
                        column(reservations, r -> Buffer.buffer(r.responseBody()), Buffer[]::new),
                        column(reservations, r -> Metadata.json(r.metadata()), String[]::new))))
                .map(rows -> {
                    Set<UUID> reserved = new HashSet<>();
                    rows.forEach(row -> reserved.add(row.getUUID("refund_id")));
                    return reservations.stream()
                            .map(r -> reserved.contains(r.refundId()))
                            .toList();
                });
    }

    /** One array parameter of the statement: {@code field} of every reservation, in order. */
    private static <T> T[] column(List<Reservation> rows, Function<Reservation, T> field, IntFunction<T[]> array) {
        return rows.stream().map(field).toArray(array);
    }
}
