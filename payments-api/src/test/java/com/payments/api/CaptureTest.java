package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.http.HttpResponse;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
        assertThat(response.<String>path("pspReference")).startsWith("ch_");
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
        assertThat(declined.<String>path("declineCode")).isEqualTo("card_declined");
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
        // the sandbox answers 400 unknown_source and records nothing: a definite refusal, not a lost answer
        Response refused = capture(KEY_A, unique("key"), body(unique("order"), 1500, "EUR", "tok_noSuchToken"));
        refused.then().statusCode(402).contentType("application/json");
        assertThat(refused.<String>path("status")).isEqualTo("FAILED");
        assertThat(refused.<String>path("declineCode")).isEqualTo("unknown_source");
        assertThat(TestSupport.paymentStatus(pool, UUID.fromString(refused.path("id"))))
                .isEqualTo("FAILED");
    }

    @Test
    void lostPspAnswerIs202UnknownNeverFailed() {
        String key = unique("key");
        String json = body(unique("order"), 2500, "EUR", "tok_timeoutCaptured");
        Response unknown = capture(KEY_A, key, json);
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
        String json = body(unique("order"), 3100, "EUR", "tok_timeoutCaptured");
        Response unknown = capture(KEY_A, key, json);
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
}
