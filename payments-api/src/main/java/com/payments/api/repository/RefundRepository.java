package com.payments.api.repository;

import com.payments.api.repository.IdempotencyRepository.StoredKey;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.UUID;

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

    private static final String RESERVE =
            """
            WITH reserved AS (
                UPDATE payments SET refunded_amount = refunded_amount + $3
                 WHERE id = $1 AND merchant_id = $2 AND status = 'CAPTURED' AND refunded_amount + $3 <= amount
                   AND currency = $5 AND psp_reference = $6
                 RETURNING id),
            refund AS (
                INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, reason)
                SELECT $4::uuid, id, $2::uuid, $3::bigint, $5::text, $7::text FROM reserved
                RETURNING id, payment_id),
            command AS (
                SELECT enqueue_event($8::uuid, $9::text, $10::text, payment_id::text, $11::text::jsonb,
                                     $12::text::jsonb) AS enqueued
                  FROM refund),
            claim AS (
                INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id, status,
                                              response_status, response_body, completed_at)
                SELECT $2::uuid, $13::text, $14::bytea, 'refund', id, 'COMPLETED', 202, $15::bytea, now() FROM refund)
            -- Reading command makes PostgreSQL run it (a SELECT in WITH runs only when read).
            SELECT count(*) FROM reserved LEFT JOIN command ON true""";

    /**
     * The conditional reservation and its effects in one statement (one atomic round trip): adds {@code amount}
     * to refunded_amount only on this merchant's CAPTURED payment and only if the total stays within the captured
     * amount (the row lock serializes concurrent reservations of one payment; each re-checks the condition on the
     * committed value); then the PENDING refund, its {@code refund-commands} outbox row (key = payment id, through
     * {@code enqueue_event}) and the
     * merchant's idempotency key, stored completed with the 202 answer. False when nothing was reserved (and
     * nothing written). A key taken meanwhile by a concurrent request fails the statement with a unique violation
     * of {@code idempotency_keys_pkey} and rolls all of it back.
     */
    public Uni<Boolean> reserve(
            SqlClient client,
            UUID merchantId,
            UUID paymentId,
            UUID refundId,
            long amount,
            String currency,
            String pspReference,
            String reason,
            OutboxRow command,
            String idempotencyKey,
            byte[] requestHash,
            byte[] responseBody) {
        return client.preparedQuery(RESERVE)
                .execute(Tuple.from(Arrays.asList(
                        paymentId,
                        merchantId,
                        amount,
                        refundId,
                        currency,
                        pspReference,
                        reason,
                        command.eventId(),
                        command.eventType(),
                        command.topic(),
                        command.payloadJson(),
                        command.headersJson(),
                        idempotencyKey,
                        Buffer.buffer(requestHash),
                        Buffer.buffer(responseBody))))
                .map(rows -> rows.iterator().next().getLong(0) == 1);
    }
}
