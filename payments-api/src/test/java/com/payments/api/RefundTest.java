package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.concurrently;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.merchantPost;
import static com.payments.api.TestSupport.rowCounts;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/payments/{id}/refunds}: the reservation under races, its refusals, and idempotency. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class RefundTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @Test
    void twoConcurrentRefundsOfSixtyThousandOnOneHundredThousand_exactlyOneIsAccepted() throws Exception {
        UUID paymentId = captured(KEY_A, 100_000);

        List<HttpResponse<String>> responses = concurrently(List.of(
                refundRequest(KEY_A, paymentId, unique("r"), "{\"amount\":60000}"),
                refundRequest(KEY_A, paymentId, unique("r"), "{\"amount\":60000}")));

        assertThat(responses).extracting(HttpResponse::statusCode).containsExactlyInAnyOrder(202, 422);
        HttpResponse<String> refused = responses.stream()
                .filter(r -> r.statusCode() == 422)
                .findFirst()
                .orElseThrow();
        assertThat(new JsonObject(refused.body()).getString("code")).isEqualTo("refund_exceeds_refundable");
        assertThat(refundedAmount(paymentId)).isEqualTo(60_000);
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", paymentId))
                .isEqualTo(1);
        assertThat(commandsFor(paymentId)).isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM idempotency_keys WHERE resource_type = 'refund' AND resource_id IN"
                                + " (SELECT id FROM refunds WHERE payment_id = $1)",
                        paymentId))
                .isEqualTo(1);
    }

    @Test
    void twoHundredConcurrentRefundsOfRandomSizes_neverExceedTheAmount() throws Exception {
        long amount = 100_000;
        UUID paymentId = captured(KEY_A, amount);
        Random random = new Random(7);
        List<HttpRequest> requests = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            long size = 1 + random.nextInt(2_000);
            sizes.add(size);
            requests.add(refundRequest(KEY_A, paymentId, unique("r"), "{\"amount\":" + size + "}"));
        }

        List<HttpResponse<String>> responses = concurrently(requests);

        long accepted = 0;
        int acceptedCount = 0;
        for (int i = 0; i < responses.size(); i++) {
            HttpResponse<String> r = responses.get(i);
            assertThat(r.statusCode()).isIn(202, 422);
            if (r.statusCode() == 202) {
                JsonObject json = new JsonObject(r.body());
                assertThat(json.getLong("amount")).isEqualTo(sizes.get(i));
                accepted += sizes.get(i);
                acceptedCount++;
            } else {
                assertThat(new JsonObject(r.body()).getString("code")).isEqualTo("refund_exceeds_refundable");
            }
        }
        // 200 refunds of ~1,000 on average ask for about twice the amount: both answers must occur
        assertThat(acceptedCount).isBetween(1, 199);
        assertThat(accepted).isLessThanOrEqualTo(amount);
        assertThat(refundedAmount(paymentId)).isEqualTo(accepted);
        assertThat(count(
                        pool,
                        "SELECT coalesce(sum(amount), 0) FROM refunds WHERE payment_id = $1 AND status = 'PENDING'",
                        paymentId))
                .isEqualTo(accepted);
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", paymentId))
                .isEqualTo(acceptedCount);
        assertThat(commandsFor(paymentId)).isEqualTo(acceptedCount);
        // a refusal leaves nothing, not even its key: at most the smallest refusal (≤ 2,000) fits
        assertThat(amount - accepted).isLessThan(2_000);
    }

    @Test
    void partialRefundsReachExactlyTheAmount_oneMoreMinorUnitIsRefused() {
        UUID paymentId = captured(KEY_A, 1_000);
        for (long part : new long[] {300, 300, 399, 1}) {
            refund(KEY_A, paymentId, unique("r"), "{\"amount\":" + part + "}")
                    .then()
                    .statusCode(202);
        }
        Map<String, Long> before = rowCounts(pool);
        Response oneMore = refund(KEY_A, paymentId, unique("r"), "{\"amount\":1}");
        oneMore.then().statusCode(422).contentType("application/problem+json");
        assertThat(oneMore.<String>path("code")).isEqualTo("refund_exceeds_refundable");
        assertThat(rowCounts(pool)).isEqualTo(before);

        Response payment = merchant(KEY_A).get("/v1/payments/" + paymentId);
        assertThat(payment.<Integer>path("refundedAmount")).isEqualTo(1_000);
        assertThat(payment.<Integer>path("refundableAmount")).isZero();
        assertThat(payment.<List<?>>path("refunds")).hasSize(4);
    }

    @Test
    void acceptedRefundIsPendingWithItsCommandInTheOutbox() {
        UUID paymentId = captured(KEY_A, 5_000);
        String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        Response response = merchant(KEY_A)
                .header("Idempotency-Key", unique("r"))
                .header("traceparent", traceparent)
                .contentType(ContentType.JSON)
                .body("{\"amount\":1200,\"reason\":\"customer changed their mind\"}")
                .post("/v1/payments/" + paymentId + "/refunds");
        response.then().statusCode(202).header("Idempotent-Replayed", (String) null);
        JsonObject answer = new JsonObject(response.asString());
        assertThat(answer.fieldNames())
                .containsExactlyInAnyOrder("refundId", "paymentId", "amount", "status", "metadata");
        assertThat(answer.getJsonObject("metadata")).isEmpty();
        UUID refundId = UUID.fromString(answer.getString("refundId"));
        assertThat(answer.getString("paymentId")).isEqualTo(paymentId.toString());
        assertThat(answer.getLong("amount")).isEqualTo(1200);
        assertThat(answer.getString("status")).isEqualTo("PENDING");

        Row refund = pool.preparedQuery(
                        """
                        SELECT r.status, r.amount, r.currency, r.reason, r.merchant_id, r.next_attempt_at,
                               p.merchant_id AS payment_merchant, p.psp_reference
                          FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE r.id = $1""")
                .execute(Tuple.of(refundId))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(refund.getString("status")).isEqualTo("PENDING");
        assertThat(refund.getLong("amount")).isEqualTo(1200);
        assertThat(refund.getString("currency")).isEqualTo("EUR");
        assertThat(refund.getString("reason")).isEqualTo("customer changed their mind");
        assertThat(refund.getUUID("merchant_id")).isEqualTo(refund.getUUID("payment_merchant"));
        assertThat(refund.getValue("next_attempt_at")).isNull();

        Row outbox = pool.preparedQuery(
                        "SELECT event_type, key, payload::text, headers::text FROM outbox WHERE topic = 'refund-commands' AND key = $1")
                .execute(Tuple.of(paymentId.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(outbox.getString("event_type")).isEqualTo("RefundRequested");
        JsonObject payload = new JsonObject(outbox.getString("payload"));
        assertThat(payload.getString("type")).isEqualTo("RefundRequested");
        assertThat(payload.getString("eventId")).isNotBlank();
        assertThat(payload.getString("refundId")).isEqualTo(refundId.toString());
        assertThat(payload.getString("paymentId")).isEqualTo(paymentId.toString());
        assertThat(payload.getString("merchantId"))
                .isEqualTo(refund.getUUID("merchant_id").toString());
        assertThat(payload.getLong("amount")).isEqualTo(1200);
        assertThat(payload.getString("currency")).isEqualTo("EUR");
        assertThat(payload.getString("pspChargeReference"))
                .startsWith(PspUnderTest.chargeIdPrefix())
                .isEqualTo(refund.getString("psp_reference"));
        // the caller's trace, continued by our request's span
        assertThat(new JsonObject(outbox.getString("headers")).getString("traceparent"))
                .matches("00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01")
                .isNotEqualTo(traceparent);

        Response read = merchant(KEY_A).get("/v1/refunds/" + refundId);
        read.then().statusCode(200);
        assertThat(read.<String>path("status")).isEqualTo("PENDING");
        merchant(KEY_B).get("/v1/refunds/" + refundId).then().statusCode(404);
    }

    @Test
    void refundsOfUnknownFailedOrOthersPaymentsAreRefusedAndStoreNothing() {
        UUID unknown = insertPayment(KEY_A, "UNKNOWN");
        UUID processing = insertPayment(KEY_A, "PROCESSING");
        Response declined = capture(KEY_A, unique("key"), body(unique("order"), 700, "EUR", "tok_chargeDeclined"));
        declined.then().statusCode(402);
        UUID failed = UUID.fromString(declined.path("id"));
        UUID othersPayment = captured(KEY_B, 700);
        String key = unique("r");

        Map<String, Long> before = rowCounts(pool);
        Response r = refund(KEY_A, unknown, key, "{\"amount\":100}");
        r.then().statusCode(409).header("Retry-After", "5").contentType("application/problem+json");
        assertThat(r.<String>path("code")).isEqualTo("payment_outcome_pending");
        assertThat(refund(KEY_A, processing, key, "{\"amount\":100}").<String>path("code"))
                .isEqualTo("payment_outcome_pending");
        r = refund(KEY_A, failed, key, "{\"amount\":100}");
        r.then().statusCode(422);
        assertThat(r.<String>path("code")).isEqualTo("payment_not_refundable");
        r = refund(KEY_A, othersPayment, key, "{\"amount\":100}");
        r.then().statusCode(404);
        assertThat(r.<String>path("code")).isEqualTo("not_found");
        assertThat(r.asString()).doesNotContain(othersPayment.toString());
        refund(KEY_A, UUID.randomUUID(), key, "{\"amount\":100}").then().statusCode(404);
        refund(KEY_A, "not-a-uuid", key, "{\"amount\":100}").then().statusCode(404);
        for (String bad : List.of(
                "{\"amount\":0}",
                "{\"amount\":1000000000001}",
                "{\"amount\":1.5}",
                "{\"amount\":\"100\"}",
                "{}",
                "{\"amount\":100,\"currency\":\"EUR\"}",
                "{\"amount\":100,\"reason\":\"" + "x".repeat(501) + "\"}",
                "{\"amount\":100,\"reason\":\"line\\nbreak\"}",
                "{\"amount\":100,\"reason\":7}",
                "[100]")) {
            Response invalid = refund(KEY_A, othersPayment, key, bad);
            invalid.then().statusCode(400).contentType("application/problem+json");
        }
        refund(KEY_B, othersPayment, "", "{\"amount\":100}").then().statusCode(400);
        io.restassured.RestAssured.given()
                .header("Idempotency-Key", key)
                .contentType(ContentType.JSON)
                .body("{\"amount\":100}")
                .post("/v1/payments/" + othersPayment + "/refunds")
                .then()
                .statusCode(401);
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(refundedAmount(othersPayment)).isZero();

        // nothing was stored under the key: it still works for an acceptable refund
        refund(KEY_B, othersPayment, key, "{\"amount\":100}").then().statusCode(202);
        assertThat(refundedAmount(othersPayment)).isEqualTo(100);
    }

    @Test
    void replayReturnsTheSameBytesAndReservesOnce() {
        UUID paymentId = captured(KEY_A, 3_000);
        String key = unique("r");
        Response first = refund(KEY_A, paymentId, key, "{\"amount\":1000,\"reason\":\"damaged\"}");
        first.then().statusCode(202).header("Idempotent-Replayed", (String) null);

        // same request, other key order and spacing: a replay
        Response again = refund(KEY_A, paymentId, key, "{ \"reason\": \"damaged\", \"amount\": 1000 }");
        again.then().statusCode(202).header("Idempotent-Replayed", "true");
        assertThat(again.asByteArray()).isEqualTo(first.asByteArray());
        assertThat(refundedAmount(paymentId)).isEqualTo(1_000);
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", paymentId))
                .isEqualTo(1);
        assertThat(commandsFor(paymentId)).isEqualTo(1);

        Map<String, Long> before = rowCounts(pool);
        Response otherAmount = refund(KEY_A, paymentId, key, "{\"amount\":999,\"reason\":\"damaged\"}");
        otherAmount.then().statusCode(422);
        assertThat(otherAmount.<String>path("code")).isEqualTo("idempotency_key_reused");
        UUID otherPayment = captured(KEY_A, 3_000);
        before = rowCounts(pool);
        Response otherPath = refund(KEY_A, otherPayment, key, "{\"amount\":1000,\"reason\":\"damaged\"}");
        otherPath.then().statusCode(422);
        assertThat(otherPath.<String>path("code")).isEqualTo("idempotency_key_reused");
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(refundedAmount(otherPayment)).isZero();
    }

    @Test
    void paymentKeyReusedForARefundIsADifferentRequest() {
        String key = unique("key");
        String captureBody = body(unique("order"), 2_000, "EUR", "tok_visa");
        Response payment = capture(KEY_A, key, captureBody);
        payment.then().statusCode(201);
        UUID paymentId = UUID.fromString(payment.path("id"));

        Map<String, Long> before = rowCounts(pool);
        Response reused = refund(KEY_A, paymentId, key, "{\"amount\":500}");
        reused.then().statusCode(422).contentType("application/problem+json");
        assertThat(reused.<String>path("code")).isEqualTo("idempotency_key_reused");
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(refundedAmount(paymentId)).isZero();
        // the payment's key is untouched: it still replays the payment
        Response replay = capture(KEY_A, key, captureBody);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.asByteArray()).isEqualTo(payment.asByteArray());
    }

    @Test
    void sameKeyConcurrentlyReservesOnce() throws Exception {
        UUID paymentId = captured(KEY_A, 10_000);
        String key = unique("r");
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(refundRequest(KEY_A, paymentId, key, "{\"amount\":4000}"));
        }
        List<HttpResponse<String>> responses = concurrently(requests);
        assertThat(responses).extracting(HttpResponse::statusCode).allMatch(s -> s == 202 || s == 409);
        assertThat(responses.stream()
                        .filter(r -> r.statusCode() == 202)
                        .map(HttpResponse::body)
                        .distinct())
                .hasSize(1);
        assertThat(refundedAmount(paymentId)).isEqualTo(4_000);
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", paymentId))
                .isEqualTo(1);
    }

    /**
     * A manual payment (issue 42, V98): nothing to refund before its capture; after a capture of 600 of 1,000 the
     * refunds reserve against the 600, and the one over it is refused like any refund over what is left.
     */
    @Test
    void refundsOfAManualPaymentAreBoundByTheCapturedAmount() {
        UUID authorized = manualPayment(KEY_A, null);
        Map<String, Long> before = rowCounts(pool);
        Response uncaptured = refund(KEY_A, authorized, unique("r"), "{\"amount\":100}");
        uncaptured.then().statusCode(422).contentType("application/problem+json");
        assertThat(uncaptured.<String>path("code")).isEqualTo("payment_not_refundable");
        assertThat(rowCounts(pool)).isEqualTo(before);

        UUID partial = manualPayment(KEY_A, 600L);
        refund(KEY_A, partial, unique("r"), "{\"amount\":500}").then().statusCode(202);
        before = rowCounts(pool);
        Response over = refund(KEY_A, partial, unique("r"), "{\"amount\":101}");
        over.then().statusCode(422).contentType("application/problem+json");
        assertThat(over.<String>path("code")).isEqualTo("refund_exceeds_refundable");
        assertThat(rowCounts(pool)).isEqualTo(before);
        refund(KEY_A, partial, unique("r"), "{\"amount\":100}").then().statusCode(202);
        assertThat(refundedAmount(partial)).isEqualTo(600);
    }

    // --- helpers

    private UUID captured(String apiKey, long amount) {
        Response response = capture(apiKey, unique("key"), body(unique("order"), amount, "EUR", "tok_visa"));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    /** A payment row in a state the capture path only reaches through the PSP's timing (UNKNOWN, PROCESSING). */
    private UUID insertPayment(String apiKey, String status) {
        UUID id = UUID.randomUUID();
        pool.preparedQuery(
                        """
                        INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status)
                        SELECT $1, merchant_id, $2, 5000, 'EUR', 'tok_visa', $3
                          FROM merchant_api_keys WHERE key_hash = $4""")
                .execute(Tuple.of(
                        id,
                        unique("order"),
                        status,
                        io.vertx.core.buffer.Buffer.buffer(
                                com.payments.api.merchants.MerchantAuthService.hash(apiKey))))
                .await()
                .indefinitely();
        return id;
    }

    /**
     * A manual payment of 1,000 EUR written as the manual capture path will (V98): AUTHORIZED, or, with {@code captured},
     * CAPTURED for that amount with its CAPTURE ledger transaction.
     */
    private UUID manualPayment(String apiKey, Long captured) {
        UUID id = UUID.randomUUID();
        pool.withTransaction(c -> c.preparedQuery(
                                """
                                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, capture_method,
                                                      status)
                                SELECT $1, merchant_id, $2, 1000, 'EUR', 'tok_visa', 'MANUAL', 'AUTHORIZING'
                                  FROM merchant_api_keys WHERE key_hash = $3""")
                        .execute(Tuple.of(
                                id,
                                unique("order"),
                                io.vertx.core.buffer.Buffer.buffer(
                                        com.payments.api.merchants.MerchantAuthService.hash(apiKey))))
                        .flatMap(inserted -> c.preparedQuery(
                                        "UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'pi_' || id"
                                                + " WHERE id = $1")
                                .execute(Tuple.of(id)))
                        .flatMap(authorized -> captured == null
                                ? io.smallrye.mutiny.Uni.createFrom().voidItem()
                                : c.preparedQuery(
                                                """
                                                WITH capturing AS (
                                                    UPDATE payments SET status = 'CAPTURING', captured_amount = $2
                                                     WHERE id = $1 RETURNING merchant_id)
                                                SELECT book_ledger_transaction('CAPTURE', 'psp_receivable',
                                                       'merchant_payable', $1::text, merchant_id, 'payment captured',
                                                       $2, 'EUR', false)
                                                  FROM capturing""")
                                        .execute(Tuple.of(id, captured))
                                        .flatMap(booked -> c.preparedQuery(
                                                        "UPDATE payments SET status = 'CAPTURED', captured_at = now()"
                                                                + " WHERE id = $1")
                                                .execute(Tuple.of(id)))
                                        .replaceWithVoid()))
                .await()
                .indefinitely();
        return id;
    }

    private static Response refund(String apiKey, Object paymentId, String key, String json) {
        return merchant(apiKey)
                .header("Idempotency-Key", key)
                .contentType(ContentType.JSON)
                .body(json)
                .post("/v1/payments/" + paymentId + "/refunds");
    }

    private static HttpRequest refundRequest(String apiKey, UUID paymentId, String key, String json) {
        return merchantPost("/v1/payments/" + paymentId + "/refunds", apiKey, key, json);
    }

    private long refundedAmount(UUID paymentId) {
        return count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paymentId);
    }

    private long commandsFor(UUID paymentId) {
        return count(
                pool,
                "SELECT count(*) FROM outbox WHERE topic = 'refund-commands' AND event_type = 'RefundRequested'"
                        + " AND key = $1",
                paymentId.toString());
    }
}
