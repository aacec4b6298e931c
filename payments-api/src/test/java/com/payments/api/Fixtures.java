package com.payments.api;

import com.payments.api.capture.CaptureRequest;
import com.payments.api.common.RequestHash;
import io.restassured.http.ContentType;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Payments written straight into the database, as a crashed or earlier process would have left them. */
final class Fixtures {
    static final UUID MERCHANT_A = UUID.fromString("00000000-0000-4000-8000-00000000000a");

    private Fixtures() {}

    /** A payment in {@code status} (PROCESSING or UNKNOWN), due for the resolver now. */
    static UUID insertPayment(Pool pool, String status, long amount, String source) {
        UUID id = UUID.randomUUID();
        return insertPayment(pool, id, "order-" + id, status, amount, source);
    }

    static UUID insertPayment(Pool pool, UUID id, String orderId, String status, long amount, String source) {
        pool.preparedQuery(
                        """
                        INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, next_attempt_at)
                        VALUES ($1, $2, $3, $4, 'EUR', $5, $6, now())""")
                .execute(Tuple.of(id, MERCHANT_A, orderId, amount, source, status))
                .await()
                .indefinitely();
        return id;
    }

    /** A captured payment with one PENDING refund that reserved part of it. */
    record Refunded(UUID paymentId, UUID refundId, String charge) {}

    /**
     * A payment captured under a PSP charge id of its own, and a PENDING refund of {@code refundAmount} reserved on it
     * (as payments-api's refund request leaves them for refunds-worker).
     */
    static Refunded pendingRefund(Pool pool, long amount, long refundAmount) {
        UUID paymentId = UUID.randomUUID();
        UUID refundId = UUID.randomUUID();
        String charge = "pi_" + paymentId.toString().replace("-", "").substring(0, 20);
        pool.withTransaction(conn -> conn.preparedQuery(
                                """
                                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status,
                                                      psp_reference, refunded_amount, captured_at)
                                VALUES ($1, $2, $3, $4, 'EUR', 'tok_visa', 'CAPTURED', $5, $6, now())""")
                        .execute(Tuple.from(
                                new Object[] {paymentId, MERCHANT_A, "order-" + paymentId, amount, charge, refundAmount
                                }))
                        .chain(() -> conn.preparedQuery(
                                        """
                                        INSERT INTO refunds (id, payment_id, merchant_id, amount, currency)
                                        VALUES ($1, $2, $3, $4, 'EUR')""")
                                .execute(Tuple.of(refundId, paymentId, MERCHANT_A, refundAmount))))
                .await()
                .indefinitely();
        return new Refunded(paymentId, refundId, charge);
    }

    /** The IN_PROGRESS key a capture claims in its first transaction, for the request {@code json}. */
    static void insertInProgressKey(Pool pool, String key, String json, UUID paymentId) {
        byte[] hash = RequestHash.of(
                "POST",
                "/v1/payments",
                CaptureRequest.parse(json.getBytes(StandardCharsets.UTF_8), 16384)
                        .canonicalJson());
        pool.preparedQuery(
                        """
                        INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
                        VALUES ($1, $2, $3, 'payment', $4)""")
                .execute(Tuple.of(MERCHANT_A, key, io.vertx.core.buffer.Buffer.buffer(hash), paymentId))
                .await()
                .indefinitely();
    }

    /** The item the resolver opens for a payment still UNKNOWN at its deadline. */
    static void openDeadlineItem(Pool pool, UUID paymentId) {
        pool.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason)
                        VALUES ('payment', $1, 'resolver_deadline')""")
                .execute(Tuple.of(paymentId.toString()))
                .await()
                .indefinitely();
    }

    /** Charges at the sandbox directly, as our capture would (payment id as key and reference). */
    static void chargeAtPsp(String pspUrl, UUID paymentId, long amount, String source) {
        chargeAtPsp(pspUrl, paymentId, amount, "EUR", source);
    }

    /** Charges at the sandbox under the payment id in {@code currency} (the payments above are in EUR). */
    static void chargeAtPsp(String pspUrl, UUID paymentId, long amount, String currency, String source) {
        TestSupport.psp(pspUrl)
                .contentType(ContentType.JSON)
                .header("Idempotency-Key", paymentId.toString())
                .body("{\"reference\":\"" + paymentId + "\",\"amount\":" + amount + ",\"currency\":\"" + currency
                        + "\",\"source\":\"" + source + "\"}")
                .post("/v1/charges")
                .then()
                .statusCode(200);
    }

    static void faults(String pspUrl, String json) {
        TestSupport.psp(pspUrl)
                .contentType(ContentType.JSON)
                .body(json)
                .put("/test/faults")
                .then()
                .statusCode(200);
    }
}
