package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.pspCounters;
import static com.payments.api.TestSupport.rowCounts;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.is;

import com.payments.api.resolver.PaymentResolver;
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
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Manual capture through the merchant API (issue 42): authorize, capture all or part, cancel, the refusals, the race
 * of captures and cancels on one authorization, replays, and a capture whose answer was lost settled by the resolver.
 * Real PostgreSQL and the sandbox PSP (its counters say what happened at the PSP).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ManualCaptureTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @Inject
    PaymentResolver resolver;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    private static String manualBody(String orderId, long amount, String source) {
        return "{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"source\":\"" + source
                + "\",\"captureMethod\":\"manual\"}";
    }

    /** An authorization of {@code amount} (201 AUTHORIZED); its payment id. */
    private UUID authorize(long amount, String source) {
        return authorize(KEY_A, amount, source);
    }

    private UUID authorize(String apiKey, long amount, String source) {
        Response response = TestSupport.capture(apiKey, unique("key"), manualBody(unique("order"), amount, source));
        response.then().statusCode(201);
        assertThat(response.<String>path("status")).isEqualTo("AUTHORIZED");
        assertThat(response.<String>path("captureMethod")).isEqualTo("manual");
        assertThat(response.<Integer>path("amount")).isEqualTo((int) amount);
        assertThat(response.<Integer>path("refundableAmount")).isZero();
        return UUID.fromString(response.path("id"));
    }

    private static Response post(String apiKey, String key, UUID id, String action, String json) {
        var request = merchant(apiKey).header("Idempotency-Key", key);
        if (json != null) {
            request = request.contentType(ContentType.JSON).body(json);
        }
        return request.post("/v1/payments/" + id + "/" + action);
    }

    private static Response captureOf(UUID id, String key, Long amount) {
        return post(KEY_A, key, id, "capture", amount == null ? null : "{\"amount\":" + amount + "}");
    }

    private static Response refund(UUID id, long amount) {
        return merchant(KEY_A)
                .header("Idempotency-Key", unique("refund"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + id + "/refunds");
    }

    private long booked(UUID id) {
        return count(
                pool,
                """
                SELECT coalesce(sum(e.amount) FILTER (WHERE e.account = 'psp_receivable'), 0)
                  FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                 WHERE t.kind = 'CAPTURE' AND t.reference = $1""",
                id.toString());
    }

    private JsonObject event(UUID id, String type) {
        var rows = pool.preparedQuery("SELECT payload FROM outbox WHERE key = $1 AND event_type = $2")
                .execute(Tuple.of(id.toString(), type))
                .await()
                .indefinitely();
        assertThat(rows.rowCount()).as("%s events of %s", type, id).isEqualTo(1);
        return rows.iterator().next().getJsonObject("payload");
    }

    @Test
    void authorizesThenCapturesPartAndRefundsWithinTheCapturedAmount() {
        UUID id = authorize(1000, "tok_visa");
        assertThat(paymentStatus(pool, id)).isEqualTo("AUTHORIZED");
        assertThat(booked(id)).as("an authorization moves no money").isZero();
        assertThat(event(id, "PaymentAuthorized").getLong("amount")).isEqualTo(1000L);
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND authorized_at IS NOT NULL", id))
                .isEqualTo(1);

        Response captured = captureOf(id, unique("cap"), 600L);
        captured.then().statusCode(200).header("Idempotent-Replayed", (String) null);
        assertThat(captured.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(captured.<Integer>path("capturedAmount")).isEqualTo(600);
        assertThat(captured.<Integer>path("amount")).isEqualTo(1000);
        assertThat(captured.<Integer>path("refundableAmount")).isEqualTo(600);

        assertThat(booked(id)).as("the ledger books the captured amount").isEqualTo(600);
        assertThat(event(id, "PaymentCaptured").getLong("capturedAmount")).isEqualTo(600L);
        Response psp = pspCounters(pspUrl, id);
        assertThat(psp.<Integer>path("chargeMovements")).isEqualTo(1);
        assertThat(psp.<Integer>path("capturedAmount")).isEqualTo(600);

        Response tooMuch = refund(id, 601);
        tooMuch.then().statusCode(422);
        assertThat(tooMuch.<String>path("code")).isEqualTo("refund_exceeds_refundable");
        refund(id, 600).then().statusCode(202);
        assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", id))
                .isEqualTo(600);

        Response read = merchant(KEY_A).get("/v1/payments/" + id);
        read.then().statusCode(200);
        assertThat(read.<Integer>path("capturedAmount")).isEqualTo(600);
        assertThat(read.<String>path("captureMethod")).isEqualTo("manual");
    }

    @Test
    void captureWithoutBodyTakesTheWholeAuthorization() {
        UUID id = authorize(750, "tok_visa");
        Response captured = captureOf(id, unique("cap"), null);
        captured.then().statusCode(200);
        assertThat(captured.<Integer>path("capturedAmount")).isEqualTo(750);
        assertThat(booked(id)).isEqualTo(750);
    }

    @Test
    void aJsonNullBodyIsAnOmittedOneAsGeneratedClientsSendIt() {
        UUID captured = authorize(640, "tok_visa");
        Response capture = post(KEY_A, unique("cap"), captured, "capture", "null");
        capture.then().statusCode(200);
        assertThat(capture.<Integer>path("capturedAmount")).isEqualTo(640);
        UUID canceled = authorize(320, "tok_visa");
        post(KEY_A, unique("cancel"), canceled, "cancel", " null ")
                .then()
                .statusCode(200)
                .body("status", is("CANCELED"));
        UUID untouched = authorize(160, "tok_visa");
        post(KEY_A, unique("cap"), untouched, "capture", "nul")
                .then()
                .statusCode(400)
                .body("code", is("invalid_json"));
        post(KEY_A, unique("cap"), untouched, "capture", "[]")
                .then()
                .statusCode(400)
                .body("code", is("invalid_json"));
        assertThat(booked(untouched)).isZero();
    }

    @Test
    void captureAboveTheAuthorizationIsRefusedAndWritesNothing() {
        UUID id = authorize(500, "tok_visa");
        Map<String, Long> before = rowCounts(pool);

        Response refused = captureOf(id, unique("cap"), 501L);

        refused.then().statusCode(422).contentType("application/problem+json");
        assertThat(refused.<String>path("code")).isEqualTo("amount_exceeds_authorized");
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("AUTHORIZED");
        assertThat(pspCounters(pspUrl, id).<Integer>path("captureRequests")).isZero();
    }

    @Test
    void cancelVoidsTheAuthorizationAndACaptureAfterItIsRefused() {
        UUID id = authorize(900, "tok_visa");

        Response canceled = post(KEY_A, unique("cancel"), id, "cancel", null);
        canceled.then().statusCode(200);
        assertThat(canceled.<String>path("status")).isEqualTo("CANCELED");
        assertThat(pspCounters(pspUrl, id).<Integer>path("voidMovements")).isEqualTo(1);
        assertThat(event(id, "PaymentCanceled").getString("paymentId")).isEqualTo(id.toString());

        Map<String, Long> before = rowCounts(pool);
        String key = unique("cap");
        Response refused = captureOf(id, key, null);
        refused.then().statusCode(409).contentType("application/problem+json");
        assertThat(refused.<String>path("code")).isEqualTo("payment_not_authorized");
        assertThat(rowCounts(pool))
                .as("a refusal stores nothing, not even its key")
                .isEqualTo(before);
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key))
                .isZero();
        assertThat(pspCounters(pspUrl, id).<Integer>path("captureRequests")).isZero();
        assertThat(booked(id)).isZero();

        Response refund = refund(id, 1);
        refund.then().statusCode(422);
        assertThat(refund.<String>path("code")).isEqualTo("payment_not_refundable");
    }

    @Test
    void refundOfAnAuthorizationIsRefusedAndWritesNothing() {
        UUID id = authorize(300, "tok_visa");
        Map<String, Long> before = rowCounts(pool);
        Response refused = refund(id, 100);
        refused.then().statusCode(422);
        assertThat(refused.<String>path("code")).isEqualTo("payment_not_refundable");
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void anAutomaticPaymentOrAnotherMerchantsCannotBeCaptured() {
        Response automatic =
                TestSupport.capture(KEY_A, unique("key"), TestSupport.body(unique("order"), 100, "EUR", "tok_visa"));
        automatic.then().statusCode(201);
        assertThat(automatic.<String>path("captureMethod")).isNull();
        assertThat(automatic.<Integer>path("capturedAmount")).isNull();
        UUID automaticId = UUID.fromString(automatic.path("id"));
        Response refused = captureOf(automaticId, unique("cap"), null);
        refused.then().statusCode(409);
        assertThat(refused.<String>path("code")).isEqualTo("payment_not_authorized");

        UUID id = authorize(100, "tok_visa");
        post(KEY_B, unique("cap"), id, "capture", null).then().statusCode(404);
        post(KEY_B, unique("cancel"), id, "cancel", null).then().statusCode(404);
        assertThat(paymentStatus(pool, id)).isEqualTo("AUTHORIZED");
    }

    @Test
    void aBadCaptureMethodIsRefused() {
        Map<String, Long> before = rowCounts(pool);
        Response refused = TestSupport.capture(
                KEY_A,
                unique("key"),
                "{\"orderId\":\"o\",\"amount\":100,\"currency\":\"EUR\",\"source\":\"tok_visa\",\"captureMethod\":\"later\"}");
        refused.then().statusCode(400).contentType("application/problem+json");
        assertThat(refused.<String>path("code")).isEqualTo("invalid_capture_method");
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void aCaptureIsReplayedByteForByteAndItsKeyIsBoundToItsRequest() {
        UUID id = authorize(400, "tok_visa");
        String key = unique("cap");
        Response first = captureOf(id, key, 250L);
        first.then().statusCode(200);

        Response again = captureOf(id, key, 250L);
        again.then().statusCode(200).header("Idempotent-Replayed", "true");
        assertThat(again.asByteArray()).isEqualTo(first.asByteArray());

        Response other = captureOf(id, key, 100L);
        other.then().statusCode(422);
        assertThat(other.<String>path("code")).isEqualTo("idempotency_key_reused");
        Response cancel = post(KEY_A, key, id, "cancel", null);
        cancel.then().statusCode(422);
        assertThat(pspCounters(pspUrl, id).<Integer>path("chargeMovements")).isEqualTo(1);
        assertThat(booked(id)).isEqualTo(250);
    }

    @Test
    void ofConcurrentCapturesAndCancelsWithDifferentKeysExactlyOneWins() throws Exception {
        // a merchant of its own: 20 requests at once stay under its rate limit
        String apiKey = TestSupport.newShop("race").key();
        UUID id = authorize(apiKey, 1000, "tok_visa");
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(
                    i % 2 == 0
                            ? TestSupport.merchantPost(
                                    "/v1/payments/" + id + "/capture",
                                    apiKey,
                                    unique("cap"),
                                    "{\"amount\":" + (100 + i) + "}")
                            : TestSupport.merchantPost(
                                    "/v1/payments/" + id + "/cancel", apiKey, unique("cancel"), "{}"));
        }

        List<HttpResponse<String>> answers = TestSupport.concurrently(requests);

        List<HttpResponse<String>> won =
                answers.stream().filter(a -> a.statusCode() == 200).toList();
        assertThat(won).as("winners").hasSize(1);
        assertThat(answers.stream().filter(a -> a.statusCode() == 409).count())
                .as("refused")
                .isEqualTo(19);
        assertThat(answers.stream().filter(a -> a.statusCode() == 409).allMatch(a -> a.body()
                        .contains("\"payment_not_authorized\"")))
                .isTrue();

        JsonObject winner = new JsonObject(won.get(0).body());
        Response psp = pspCounters(pspUrl, id);
        int captures = psp.<Integer>path("chargeMovements");
        int voids = psp.<Integer>path("voidMovements");
        assertThat(captures + voids).as("moves at the PSP").isEqualTo(1);
        assertThat(psp.<Integer>path("captureRequests") + psp.<Integer>path("voidRequests"))
                .as("only the winner called the PSP")
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = 'AUTHORIZED'",
                        id))
                .isEqualTo(1);
        if (winner.getString("status").equals("CAPTURED")) {
            assertThat(captures).isEqualTo(1);
            assertThat(booked(id)).isEqualTo(winner.getLong("capturedAmount"));
            assertThat(psp.<Integer>path("capturedAmount"))
                    .isEqualTo(winner.getLong("capturedAmount").intValue());
        } else {
            assertThat(winner.getString("status")).isEqualTo("CANCELED");
            assertThat(voids).isEqualTo(1);
            assertThat(booked(id)).isZero();
        }
        assertThat(paymentStatus(pool, id)).isEqualTo(winner.getString("status"));
    }

    @Test
    void aCaptureWhoseAnswerIsLostIsSettledByTheResolverUnderTheSameKey() {
        UUID id = authorize(800, "tok_captureTimeout");

        Response pending = captureOf(id, unique("cap"), 700L);

        pending.then().statusCode(202);
        assertThat(pending.<String>path("status")).isEqualTo("CAPTURING");
        assertThat(pending.<Integer>path("capturedAmount")).isEqualTo(700);
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURING");
        assertThat(booked(id)).as("nothing booked while unknown").isZero();
        Response refund = refund(id, 1);
        refund.then().statusCode(409);
        assertThat(refund.<String>path("code")).isEqualTo("payment_outcome_pending");

        resolver.runOnce().await().indefinitely();

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(booked(id)).isEqualTo(700);
        assertThat(event(id, "PaymentCaptured").getLong("capturedAmount")).isEqualTo(700L);
        Response psp = pspCounters(pspUrl, id);
        assertThat(psp.<Integer>path("chargeMovements")).as("captured once").isEqualTo(1);
        assertThat(psp.<Integer>path("capturedAmount")).isEqualTo(700);
        assertThat(psp.<Integer>path("captureRequests"))
                .as("the resolver re-sent the same capture")
                .isEqualTo(2);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = 'CAPTURING'"
                                + " AND to_status = 'CAPTURED' AND actor = 'resolver'",
                        id))
                .isEqualTo(1);
        List<String> calls = pspCalls(id).stream()
                .filter(call -> call.contains(" capture of "))
                .toList();
        assertThat(calls)
                .as("the lost capture and the re-sent one, in psp_calls")
                .hasSize(2);
        assertThat(calls.get(0)).startsWith("0 capture of 700: error ");
        assertThat(calls.get(1)).startsWith("1 capture of 700: captured ");
    }

    @Test
    void capturesAndVoidsAreRecordedAsChargesAre() {
        // a capture that succeeds at once: its duration on the payment row, as a charge's (V97), no psp_calls row
        UUID captured = authorize(500, "tok_visa");
        captureOf(captured, unique("cap"), 300L).then().statusCode(200);
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND charge_ms >= 0", captured))
                .as("the capture's duration on the payment row")
                .isEqualTo(1);
        assertThat(pspCalls(captured)).noneMatch(call -> call.contains("capture"));

        // a void: a psp_calls row of the call
        UUID canceled = authorize(400, "tok_visa");
        post(KEY_A, unique("cancel"), canceled, "cancel", null).then().statusCode(200);
        assertThat(pspCalls(canceled)).contains("0 void: canceled");

        // a capture the PSP refuses (the authorization was voided there behind our back): the refusal's call too
        UUID voidedAtPsp = authorize(450, "tok_visa");
        String charge = pool.preparedQuery("SELECT psp_reference FROM payments WHERE id = $1")
                .execute(Tuple.of(voidedAtPsp))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
        TestSupport.psp(pspUrl)
                .header("Idempotency-Key", unique("void-elsewhere"))
                .post("/v1/charges/" + charge + "/void")
                .then()
                .statusCode(200);
        captureOf(voidedAtPsp, unique("cap"), 450L).then().statusCode(409);
        assertThat(pspCalls(voidedAtPsp)).anyMatch(call -> call.startsWith("0 capture of 450: declined "));
    }

    @Test
    void aCaptureStartedDaysAfterTheAuthorizationHasTheResolversWholeDeadline() {
        UUID id = authorize(500, "tok_visa");
        // authorized six days ago: the payment is far older than the resolver's deadline (4 s in tests)
        pool.preparedQuery("UPDATE payments SET created_at = now() - interval '6 days' WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely();
        // the PSP answers 500 from now on: the capture's outcome is unknown, and so is the resolver's re-sent one
        Fixtures.faults(pspUrl, "{\"errorRate\":1.0}");
        try {
            captureOf(id, unique("cap"), 400L).then().statusCode(202);
            OffsetDateTime started = pool.preparedQuery(
                            "SELECT at FROM payment_transitions WHERE payment_id = $1 AND to_status = 'CAPTURING'")
                    .execute(Tuple.of(id))
                    .await()
                    .indefinitely()
                    .iterator()
                    .next()
                    .getOffsetDateTime(0);

            resolver.runOnce().await().atMost(Duration.ofSeconds(30));

            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURING");
            assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND next_attempt_at IS NOT NULL", id))
                    .as("another attempt scheduled: the capture's deadline counts from its start")
                    .isEqualTo(1);
            assertThat(deadlineItems(id)).isZero();

            // the deadline still holds, counted from the capture's start
            Awaitility.await()
                    .atMost(Duration.ofSeconds(40))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                        return deadlineItems(id) == 1;
                    });
            OffsetDateTime escalated = pool.preparedQuery(
                            "SELECT created_at FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline'")
                    .execute(Tuple.of(id.toString()))
                    .await()
                    .indefinitely()
                    .iterator()
                    .next()
                    .getOffsetDateTime(0);
            assertThat(escalated).isAfterOrEqualTo(started.plusSeconds(4));
            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURING");
        } finally {
            TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
            breakers.resetAll();
        }
    }

    private long deadlineItems(UUID id) {
        return count(
                pool,
                "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline'",
                id.toString());
    }

    /** The payment's psp_calls rows, oldest first: "attempt outcome". */
    private List<String> pspCalls(UUID id) {
        List<String> calls = new ArrayList<>();
        pool.preparedQuery("SELECT attempt, outcome FROM psp_calls WHERE payment_id = $1 ORDER BY started_at")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .forEach(row -> calls.add(row.getInteger(0) + " " + row.getString(1)));
        return calls;
    }
}
