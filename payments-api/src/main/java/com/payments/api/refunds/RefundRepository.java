package com.payments.api.refunds;

import com.payments.api.common.Metadata;
import com.payments.api.common.OutboxRow;
import com.payments.api.idempotency.IdempotencyRepository;
import com.payments.api.idempotency.IdempotencyRepository.StoredKey;
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

    private static final String RESERVE =
            """
            WITH input AS (
                SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::uuid[], $5::text[], $6::text[], $7::text[],
                                     $8::uuid[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
                                     $14::bytea[], $15::bytea[], $16::text[])
                    AS t (payment_id, merchant_id, amount, refund_id, currency, psp_reference, reason,
                          event_id, event_type, topic, payload, headers, key, request_hash, response_body, metadata)),
            reserved AS (
                UPDATE payments p SET refunded_amount = p.refunded_amount + input.amount
                  FROM input
                 WHERE p.id = input.payment_id AND p.merchant_id = input.merchant_id AND p.status = 'CAPTURED'
                   AND p.refunded_amount + input.amount <= p.amount
                   AND p.currency = input.currency AND p.psp_reference = input.psp_reference
                 RETURNING input.*),
            refund AS (
                INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, reason, metadata)
                SELECT refund_id, payment_id, merchant_id, amount, currency, reason, metadata::jsonb FROM reserved
                RETURNING id, payment_id),
            command AS (
                SELECT enqueue_events(array_agg(r.event_id), array_agg(r.event_type), array_agg(r.topic),
                                      array_agg(r.payment_id::text), array_agg(r.payload::jsonb),
                                      array_agg(r.headers::jsonb)) AS enqueued
                  FROM reserved r JOIN refund ON refund.id = r.refund_id),
            claim AS (
                INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id, status,
                                              response_status, response_body, completed_at)
                SELECT r.merchant_id, r.key, r.request_hash, 'refund', r.refund_id, 'COMPLETED', 202, r.response_body,
                       now()
                  FROM reserved r JOIN refund ON refund.id = r.refund_id)
            -- Reading command makes PostgreSQL run it (a SELECT in WITH runs only when read).
            SELECT refund_id FROM reserved LEFT JOIN command ON true""";

    /**
     * The conditional reservations and their effects in one statement (one atomic round trip), one row per
     * reservation: adds {@code amount} to refunded_amount only on this merchant's CAPTURED payment and only if the
     * total stays within the captured amount (the row lock serializes concurrent reservations of one payment; each
     * re-checks the condition on the committed value); then the PENDING refund, its {@code refund-commands} outbox
     * row (key = payment id, through {@code enqueue_events}) and the merchant's idempotency key, stored completed with the 202 answer. Answers, in
     * order, whether each was reserved (false: nothing of it written). Two reservations of one payment must not share
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
