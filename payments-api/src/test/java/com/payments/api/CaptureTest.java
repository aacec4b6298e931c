package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.rowCounts;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.capture.CaptureRequest;
import com.payments.api.common.RequestHash;
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
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class CaptureTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @Test
    void capturesWithLedgerOutboxAndCompletedKey() {
        String orderId = unique("order");
        Response response = capture(KEY_A, unique("key"), body(orderId, 1999, "EUR", "tok_visa"));
        response.then().statusCode(201).header("Idempotent-Replayed", (String) null);
        UUID id = UUID.fromString(response.path("id"));
        assertThat(response.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(response.<String>path("pspReference")).startsWith(PspUnderTest.chargeIdPrefix());
        assertThat(response.<Integer>path("refundableAmount")).isEqualTo(1999);

        Row ledger = pool.preparedQuery(
                        """
                        SELECT count(*) AS entries, sum(e.amount) AS total,
                               sum(e.amount) FILTER (WHERE account = 'psp_receivable') AS receivable
                          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'CAPTURE' AND t.reference = $1""")
                .execute(Tuple.of(id.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(ledger.getLong("entries")).isEqualTo(2);
        assertThat(ledger.getLong("total")).isZero();
        assertThat(ledger.getLong("receivable")).isEqualTo(1999);

        Row outbox = pool.preparedQuery("SELECT event_type, topic, payload, headers FROM outbox WHERE key = $1")
                .execute(Tuple.of(id.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(outbox.getString("event_type")).isEqualTo("PaymentCaptured");
        assertThat(outbox.getString("topic")).isEqualTo("payment-events");
        assertThat(outbox.getJsonObject("payload").getString("paymentId")).isEqualTo(id.toString());
        assertThat(outbox.getJsonObject("payload").getLong("amount")).isEqualTo(1999L);
        assertThat(outbox.getJsonObject("headers").getString("traceparent")).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");

        assertThat(count(
                        pool,
                        "SELECT count(*) FROM idempotency_keys WHERE resource_id = $1 AND status = 'COMPLETED'",
                        id))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = 'PROCESSING' AND to_status = 'CAPTURED' AND actor = 'capture'",
                        id))
                .isEqualTo(1);
    }

    @Test
    void everyPspCallIsTimedByProviderCallAndOutcome() {
        String sample = "psp_calls_seconds_count{call=\"charge\",outcome=\"captured\",provider=\""
                + PspUnderTest.provider() + "\"}";
        double before = Math.max(0, ResolverTest.metric(metrics(), sample));

        capture(KEY_A, unique("key"), body(unique("order"), 1200, "EUR", "tok_visa"))
                .then()
                .statusCode(201);

        assertThat(ResolverTest.metric(metrics(), sample)).isEqualTo(before + 1);
    }

    private static String metrics() {
        return TestSupport.management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
    }

    @Test
    void continuesTheCallersTraceInTheOutboxRow() {
        String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        Response response = TestSupport.merchant(KEY_A)
                .header("Idempotency-Key", unique("key"))
                .header("traceparent", traceparent)
                .contentType("application/json")
                .body(body(unique("order"), 10, "EUR", "tok_visa"))
                .post("/v1/payments");
        response.then().statusCode(201);
        String stored = pool.preparedQuery("SELECT headers->>'traceparent' FROM outbox WHERE key = $1")
                .execute(Tuple.of(response.<String>path("id")))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
        // the caller's trace, our request's span (a child of the caller's span)
        assertThat(stored)
                .matches("00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01")
                .isNotEqualTo(traceparent);
    }

    @Test
    void hundredConcurrentRequestsWithOneKeyChargeOnce() throws Exception {
        String key = unique("concurrent");
        String orderId = unique("order");
        String json = body(orderId, 4200, "EUR", "tok_visa");
        List<HttpResponse<String>> responses = TestSupport.concurrently(
                Collections.nCopies(100, TestSupport.merchantPost("/v1/payments", KEY_A, key, json)));
        List<Integer> statuses =
                responses.stream().map(HttpResponse::statusCode).toList();
        assertThat(statuses).allMatch(s -> s == 201 || s == 409);
        List<String> created = responses.stream()
                .filter(r -> r.statusCode() == 201)
                .map(HttpResponse::body)
                .distinct()
                .toList();
        assertThat(created).hasSize(1);
        assertThat(statuses).contains(201);
        responses.stream()
                .filter(r -> r.statusCode() == 409)
                .forEach(r -> assertThat(r.headers().firstValue("Retry-After")).isPresent());

        UUID id = UUID.fromString(new JsonObject(created.get(0)).getString("id"));
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isEqualTo(1);
        Response counters = TestSupport.pspCounters(pspUrl, id);
        assertThat(counters.<Integer>path("chargeRequests")).isEqualTo(1);
        assertThat(counters.<Integer>path("chargeMovements")).isEqualTo(1);
    }

    @Test
    void sameKeyDifferentRequestIs422AndStoresNothing() {
        String key = unique("key");
        String orderId = unique("order");
        capture(KEY_A, key, body(orderId, 500, "EUR", "tok_visa")).then().statusCode(201);
        Map<String, Long> before = TestSupport.rowCounts(pool);

        Response mismatch = capture(KEY_A, key, body(orderId, 501, "EUR", "tok_visa"));
        mismatch.then().statusCode(422).contentType("application/problem+json").header("Idempotent-Replayed", (String)
                null);
        assertThat(mismatch.<String>path("code")).isEqualTo("idempotency_key_reused");
        capture(KEY_A, key, body(orderId, 500, "USD", "tok_visa")).then().statusCode(422);
        capture(KEY_A, key, body(orderId + "x", 500, "EUR", "tok_visa")).then().statusCode(422);

        assertThat(TestSupport.rowCounts(pool)).isEqualTo(TestSupport.plusReplays(before, 3));
    }

    @Test
    void replayReturnsTheIdenticalBytesWithTheReplayHeader() {
        String key = unique("key");
        String json = body(unique("order"), 777, "JPY", "tok_mastercard");
        Response first = capture(KEY_A, key, json);
        first.then().statusCode(201).header("Idempotent-Replayed", (String) null);
        Map<String, Long> before = TestSupport.rowCounts(pool);

        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.asByteArray()).isEqualTo(first.asByteArray());

        // the same request with other key order and spacing is the same request (canonical body)
        String reordered = "{ \"source\" : \"tok_mastercard\", \"currency\":\"JPY\", \"amount\": 777, \"orderId\": \""
                + first.<String>path("orderId") + "\" }";
        Response canonical = capture(KEY_A, key, reordered);
        canonical.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(canonical.asByteArray()).isEqualTo(first.asByteArray());
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(TestSupport.plusReplays(before, 2));
    }

    @Test
    void declineIs402StoredAndReplayed() {
        String key = unique("key");
        String json = body(unique("order"), 1500, "EUR", "tok_chargeDeclined");
        Response declined = capture(KEY_A, key, json);
        declined.then().statusCode(402).contentType("application/json");
        assertThat(declined.<String>path("status")).isEqualTo("FAILED");
        assertThat(declined.<String>path("declineCode")).isEqualTo(PspUnderTest.declinedCode());
        UUID id = UUID.fromString(declined.path("id"));

        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(402).header("Idempotent-Replayed", "true");
        assertThat(replay.asByteArray()).isEqualTo(declined.asByteArray());

        assertThat(TestSupport.paymentStatus(pool, id)).isEqualTo("FAILED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentFailed'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        // a new attempt needs a new key
        capture(KEY_A, unique("key"), body(unique("order"), 1500, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
    }

    @Test
    void pspRefusalOfTheRequestIs402WithItsCodeNotUnknown() {
        // the PSP answers 400 (sandbox: unknown_source, Stripe: resource_missing) and records nothing: a definite
        // refusal, not a lost answer
        Response refused = capture(KEY_A, unique("key"), body(unique("order"), 1500, "EUR", "tok_noSuchToken"));
        refused.then().statusCode(402).contentType("application/json");
        assertThat(refused.<String>path("status")).isEqualTo("FAILED");
        assertThat(refused.<String>path("declineCode")).isEqualTo(PspUnderTest.unknownSourceCode());
        assertThat(TestSupport.paymentStatus(pool, UUID.fromString(refused.path("id"))))
                .isEqualTo("FAILED");
    }

    @Test
    void lostPspAnswerIs202UnknownNeverFailed() {
        String key = unique("key");
        String json = body(unique("order"), 2500, "EUR", PspUnderTest.lostAnswerSource(true));
        Response unknown = PspUnderTest.lostAnswer(pspUrl, true, () -> capture(KEY_A, key, json));
        unknown.then().statusCode(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(unknown.path("id"));
        assertThat(TestSupport.paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND to_status = 'FAILED'",
                        id))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isZero();

        // the replay shows the payment's current state
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(202).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("status")).isEqualTo("UNKNOWN");
        // the PSP did charge it (the answer was only late): the resolver's work, proven here for the record
        assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                .isEqualTo(1);
    }

    @Test
    void replayOfAnUnknownPaymentShowsItsCurrentState() {
        String key = unique("key");
        String json = body(unique("order"), 3100, "EUR", PspUnderTest.lostAnswerSource(true));
        Response unknown = PspUnderTest.lostAnswer(pspUrl, true, () -> capture(KEY_A, key, json));
        unknown.then().statusCode(202);
        UUID id = UUID.fromString(unknown.path("id"));
        // another path (resolver/webhook) records the capture later
        pool.withTransaction(conn -> conn.preparedQuery(
                                "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_resolved', captured_at = now() WHERE id = $1")
                        .execute(Tuple.of(id)))
                .await()
                .indefinitely();
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(replay.<String>path("pspReference")).isEqualTo("ch_resolved");
    }

    @Test
    void aKeyAnotherWriterCompletedFirstAnswersItsStoredBytes() throws Exception {
        String key = unique("key");
        String json = body(unique("order"), 2_700, "EUR", "tok_visa");
        // what another writer stored (the previous release during a roll renders its own format): not this version's
        byte[] stored =
                "{\"status\":\"CAPTURED\",\"note\":\"rendered by another writer\"}".getBytes(StandardCharsets.UTF_8);
        Fixtures.faults(pspUrl, "{\"latencyFixedMs\":2500}");
        try {
            CompletableFuture<HttpResponse<byte[]>> pending = HttpClient.newHttpClient()
                    .sendAsync(
                            TestSupport.merchantPost("/v1/payments", KEY_A, key, json),
                            HttpResponse.BodyHandlers.ofByteArray());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key) == 1);
            // while the PSP call is out, another writer (a webhook) records the capture and completes the key
            List<Integer> written = pool.withTransaction(conn -> conn.preparedQuery(
                                    "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_other_writer', captured_at = now()"
                                            + " WHERE id = (SELECT resource_id FROM idempotency_keys WHERE key = $1)"
                                            + " AND status = 'PROCESSING'")
                            .execute(Tuple.of(key))
                            .flatMap(payment -> conn.preparedQuery(
                                            "UPDATE idempotency_keys SET status = 'COMPLETED', response_status = 201,"
                                                    + " response_body = $2, completed_at = now(), final_at = now()"
                                                    + " WHERE key = $1 AND status = 'IN_PROGRESS'")
                                    .execute(Tuple.of(key, io.vertx.core.buffer.Buffer.buffer(stored)))
                                    .map(k -> List.of(payment.rowCount(), k.rowCount()))))
                    .await()
                    .indefinitely();
            assertThat(written).as("the other writer was first").containsExactly(1, 1);

            HttpResponse<byte[]> first = pending.get(60, TimeUnit.SECONDS);

            assertThat(first.statusCode()).isEqualTo(201);
            assertThat(new String(first.body(), StandardCharsets.UTF_8))
                    .as("the key's stored answer, not this version's rendering of the payment")
                    .isEqualTo(new String(stored, StandardCharsets.UTF_8));
            assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        } finally {
            TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        }
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.asByteArray()).isEqualTo(stored);
    }

    // ---- metadata on payments and refunds (docs/api.md "Metadata"): stored, returned on every read and in the events
    // of its payment or refund; part of the idempotency fingerprint; refused (invalid or card-like) without a trace;
    // the same rule held by the database's CHECK.
    private static final Map<String, String> PAYMENT_METADATA =
            Map.of("customer", "c-81", "note", "gift wrap, deliver after 5 pm", "ünï", "ça va 😀");
    private static final Map<String, String> REFUND_METADATA = Map.of("ticket", "T-1020", "agent", "ada");

    @Test
    void paymentAndRefundMetadataIsStoredReturnedAndPublished() {
        Response captured =
                capture(KEY_A, unique("key"), captureBody(unique("order"), 5_000, "tok_visa", PAYMENT_METADATA));
        captured.then().statusCode(201);
        UUID paymentId = UUID.fromString(captured.path("id"));
        assertThat(captured.<Map<String, String>>path("metadata")).isEqualTo(PAYMENT_METADATA);
        assertThat(column("payments", paymentId)).isEqualTo(PAYMENT_METADATA);
        assertThat(event(paymentId, "PaymentCaptured")).isEqualTo(PAYMENT_METADATA);
        Response read = merchant(KEY_A).get("/v1/payments/" + paymentId);
        assertThat(read.<Map<String, String>>path("metadata")).isEqualTo(PAYMENT_METADATA);

        Response refund = refund(paymentId, unique("rkey"), refundBody(1_000, REFUND_METADATA));
        refund.then().statusCode(202);
        UUID refundId = UUID.fromString(refund.path("refundId"));
        assertThat(refund.<Map<String, String>>path("metadata")).isEqualTo(REFUND_METADATA);
        assertThat(column("refunds", refundId)).isEqualTo(REFUND_METADATA);
        assertThat(event(paymentId, "RefundRequested")).isEqualTo(REFUND_METADATA);
        assertThat(merchant(KEY_A).get("/v1/refunds/" + refundId).<Map<String, String>>path("metadata"))
                .isEqualTo(REFUND_METADATA);
        assertThat(merchant(KEY_A).get("/v1/payments/" + paymentId).<Map<String, String>>path("refunds[0].metadata"))
                .isEqualTo(REFUND_METADATA);

        // none sent: {} everywhere, in the events too
        Response plain = capture(KEY_A, unique("key"), captureBody(unique("order"), 700, "tok_visa", null));
        plain.then().statusCode(201);
        UUID plainId = UUID.fromString(plain.path("id"));
        assertThat(plain.<Map<String, String>>path("metadata")).isEmpty();
        assertThat(event(plainId, "PaymentCaptured")).isEmpty();
        Response plainRefund = refund(plainId, unique("rkey"), "{\"amount\":100}");
        assertThat(plainRefund.<Map<String, String>>path("metadata")).isEmpty();
        assertThat(event(plainId, "RefundRequested")).isEmpty();
    }

    @Test
    void aDeclinedPaymentsEventCarriesItsMetadata() {
        Response declined = capture(
                KEY_A, unique("key"), captureBody(unique("order"), 1_500, "tok_chargeDeclined", PAYMENT_METADATA));
        declined.then().statusCode(402);
        UUID paymentId = UUID.fromString(declined.path("id"));
        assertThat(declined.<Map<String, String>>path("metadata")).isEqualTo(PAYMENT_METADATA);
        assertThat(event(paymentId, "PaymentFailed")).isEqualTo(PAYMENT_METADATA);
    }

    /**
     * The fingerprint covers metadata: the same metadata in another key order replays, other metadata (or none
     * instead of some) under the same key is 422 {@code idempotency_key_reused} and changes nothing.
     */
    @Test
    void metadataIsPartOfTheIdempotencyFingerprint() {
        String key = unique("key");
        String orderId = unique("order");
        Map<String, String> ordered = new LinkedHashMap<>();
        ordered.put("a", "1");
        ordered.put("b", "2");
        Map<String, String> reversed = new LinkedHashMap<>();
        reversed.put("b", "2");
        reversed.put("a", "1");
        Response first = capture(KEY_A, key, captureBody(orderId, 2_000, "tok_visa", ordered));
        first.then().statusCode(201);
        capture(KEY_A, key, captureBody(orderId, 2_000, "tok_visa", reversed))
                .then()
                .statusCode(201)
                .header("Idempotent-Replayed", "true");

        Map<String, Long> before = rowCounts(pool);
        for (Map<String, String> other :
                List.of(Map.of("a", "1", "b", "3"), Map.of("a", "1"), Map.<String, String>of())) {
            Response reused = capture(KEY_A, key, captureBody(orderId, 2_000, "tok_visa", other));
            reused.then().statusCode(422);
            assertThat(reused.<String>path("code")).isEqualTo("idempotency_key_reused");
        }
        assertThat(rowCounts(pool)).isEqualTo(TestSupport.plusReplays(before, 3));

        UUID paymentId = UUID.fromString(first.path("id"));
        String refundKey = unique("rkey");
        refund(paymentId, refundKey, refundBody(500, ordered)).then().statusCode(202);
        refund(paymentId, refundKey, refundBody(500, reversed))
                .then()
                .statusCode(202)
                .header("Idempotent-Replayed", "true");
        before = rowCounts(pool);
        Response reused = refund(paymentId, refundKey, refundBody(500, Map.of("a", "2", "b", "2")));
        reused.then().statusCode(422);
        assertThat(reused.<String>path("code")).isEqualTo("idempotency_key_reused");
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    /** A request without metadata is the request it was before metadata existed: keys stored then still replay. */
    @Test
    void aRequestWithoutMetadataHashesAsBefore() {
        String json = TestSupport.body("order-1", 1000, "EUR", "tok_visa");
        ObjectNode old = JsonNodeFactory.instance.objectNode();
        old.put("amount", 1000);
        old.put("currency", "EUR");
        old.put("orderId", "order-1");
        old.put("source", "tok_visa");
        byte[] parsed = RequestHash.of(
                "POST",
                "/v1/payments",
                CaptureRequest.parse(json.getBytes(StandardCharsets.UTF_8), 16384)
                        .canonicalJson());
        assertThat(parsed).isEqualTo(RequestHash.of("POST", "/v1/payments", old));
        byte[] withEmpty = RequestHash.of(
                "POST",
                "/v1/payments",
                CaptureRequest.parse(json.replace("}", ",\"metadata\":{}}").getBytes(StandardCharsets.UTF_8), 16384)
                        .canonicalJson());
        assertThat(withEmpty).isEqualTo(parsed);
    }

    /** Refused metadata on a refund leaves nothing, as on a capture (ValidationTest has the capture's cases). */
    @Test
    void refusedRefundMetadataChangesNothing() {
        UUID paymentId =
                UUID.fromString(capture(KEY_A, unique("key"), captureBody(unique("order"), 3_000, "tok_visa", null))
                        .path("id"));
        Map<String, Long> before = rowCounts(pool);
        Map<String, String> cases = Map.of(
                "{\"amount\":100,\"metadata\":{\"k\":\"" + "v".repeat(501) + "\"}}",
                "invalid_metadata",
                "{\"amount\":100,\"metadata\":{\"k\":7}}",
                "invalid_metadata",
                "{\"amount\":100,\"metadata\":\"k=v\"}",
                "invalid_metadata",
                "{\"amount\":100,\"metadata\":{\"card\":\"4242 4242 4242 4242\"}}",
                "card_data_rejected",
                "{\"amount\":100,\"metadata\":{\"4242424242424242\":\"card\"}}",
                "card_data_rejected");
        cases.forEach((json, code) -> {
            Response r = refund(paymentId, unique("rkey"), json);
            assertThat(r.statusCode()).as(json).isEqualTo(400);
            assertThat(r.contentType()).as(json).startsWith("application/problem+json");
            assertThat(r.<String>path("code")).as(json).isEqualTo(code);
            // the request id in "instance" is random hex and may contain 4242 itself (a CI run on 2026-12-06)
            assertThat(r.asString().replace(r.<String>path("instance"), "")).doesNotContain("4242");
        });
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    /** The database holds the rule too: what the API refuses, a CHECK refuses (payments and refunds). */
    @Test
    void theDatabaseRefusesMetadataOutsideTheRule() {
        UUID paymentId =
                UUID.fromString(capture(KEY_A, unique("key"), captureBody(unique("order"), 3_000, "tok_visa", null))
                        .path("id"));
        UUID refundId = UUID.fromString(
                refund(paymentId, unique("rkey"), "{\"amount\":100}").path("refundId"));
        JsonObject tooMany = new JsonObject();
        for (int i = 0; i < 21; i++) {
            tooMany.put("k" + i, "v");
        }
        List<String> invalid = List.of(
                "[]",
                "{\"k\":1}",
                "{\"k\":{\"nested\":\"v\"}}",
                "{\"\":\"v\"}",
                new JsonObject().put("k".repeat(41), "v").encode(),
                new JsonObject().put("k", "v".repeat(501)).encode(),
                new JsonObject().put("k", "a\nb").encode(),
                new JsonObject().put("a\tb", "v").encode(),
                tooMany.encode());
        for (String table : List.of("payments", "refunds")) {
            UUID id = table.equals("payments") ? paymentId : refundId;
            for (String metadata : invalid) {
                assertThatThrownBy(() -> setMetadata(table, id, metadata))
                        .as(table + " " + metadata)
                        .hasMessageContaining(table + "_metadata_valid");
            }
            tooMany.remove("k0");
            String valid = new JsonObject()
                    .put("k".repeat(40), "v".repeat(500))
                    .put("ünï", "😀")
                    .encode();
            // the text is cast: a String bound to a jsonb parameter would arrive as a JSON string, not an object
            assertThatCode(() -> setMetadata(table, id, valid)).as(table).doesNotThrowAnyException();
            assertThatCode(() -> setMetadata(table, id, tooMany.encode()))
                    .as(table)
                    .doesNotThrowAnyException();
            assertThat(column(table, id)).hasSize(20);
            tooMany.put("k0", "v");
        }
    }

    private void setMetadata(String table, UUID id, String metadata) {
        pool.preparedQuery("UPDATE " + table + " SET metadata = $2::text::jsonb WHERE id = $1")
                .execute(Tuple.of(id, metadata))
                .await()
                .indefinitely();
    }

    private Map<String, String> column(String table, UUID id) {
        return pool
                .preparedQuery("SELECT metadata FROM " + table + " WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getJsonObject(0)
                .getMap()
                .entrySet()
                .stream()
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> (String) e.getValue()));
    }

    /** The {@code metadata} of the payment's outbox event of this type, as the relay publishes it. */
    private Map<String, Object> event(UUID paymentId, String type) {
        JsonObject payload = pool.preparedQuery("SELECT payload FROM outbox WHERE key = $1 AND event_type = $2")
                .execute(Tuple.of(paymentId.toString(), type))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getJsonObject("payload");
        assertThat(payload.containsKey("metadata")).as(type + " has metadata").isTrue();
        return payload.getJsonObject("metadata").getMap();
    }

    private static Response refund(UUID paymentId, String key, String json) {
        return merchant(KEY_A)
                .header("Idempotency-Key", key)
                .contentType(ContentType.JSON)
                .body(json)
                .post("/v1/payments/" + paymentId + "/refunds");
    }

    static String captureBody(String orderId, long amount, String source, Map<String, String> metadata) {
        JsonObject body = new JsonObject()
                .put("orderId", orderId)
                .put("amount", amount)
                .put("currency", "EUR")
                .put("source", source);
        if (metadata != null) {
            body.put("metadata", new JsonObject(new LinkedHashMap<>(metadata)));
        }
        return body.encode();
    }

    private static String refundBody(long amount, Map<String, String> metadata) {
        return new JsonObject()
                .put("amount", amount)
                .put("metadata", new JsonObject(new LinkedHashMap<>(metadata)))
                .encode();
    }
}
