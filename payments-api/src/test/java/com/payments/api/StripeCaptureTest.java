package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.expiry.AuthorizationExpiry;
import com.payments.api.resolver.PaymentResolver;
import com.payments.psp.port.PspPort;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Capture and the resolver with {@code psp.provider=stripe}, against the sandbox's Stripe mode: the module's global
 * test resources start PostgreSQL and the sandbox ({@code psp.timeout-delay=8s}) on loopback, and the test profile
 * points {@code psp.stripe.api-base} at the sandbox's {@code /stripe}.
 */
@QuarkusTest
@TestProfile(StripeCaptureTest.Stripe.class)
class StripeCaptureTest {

    /** The Stripe adapter with a test key, as a deployment sets {@code PSP_PROVIDER} and {@code STRIPE_API_KEY}. */
    public static class Stripe implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("psp.provider", "stripe", "psp.stripe.api-key", "sk_test_payments_api");
        }
    }

    @Inject
    Pool pool;

    @Inject
    PaymentResolver resolver;

    @Inject
    PspPort psp;

    @Inject
    AuthorizationExpiry expiry;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @AfterEach
    void noFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        TestSupport.psp(pspUrl).delete("/test/clock").then().statusCode(200);
    }

    @Test
    void anAuthorizationNotCapturedInTimeIsCanceledAtStripeAndExpires() {
        Response authorized = capture(
                KEY_A,
                unique("key"),
                "{\"orderId\":\"" + unique("order") + "\",\"amount\":1200,\"currency\":\"EUR\","
                        + "\"source\":\"tok_visa\",\"captureMethod\":\"manual\"}");
        authorized.then().statusCode(201);
        assertThat(authorized.<String>path("pspReference")).startsWith("pi_");
        UUID id = UUID.fromString(authorized.path("id"));
        TestSupport.ageAuthorization(pool, id, 8);

        expiry.runOnce().await().indefinitely();

        assertThat(paymentStatus(pool, id)).isEqualTo("EXPIRED");
        Response psp = TestSupport.pspCounters(pspUrl, id);
        assertThat(psp.<Integer>path("voidMovements"))
                .as("the PaymentIntent canceled")
                .isEqualTo(1);
        assertThat(psp.<Integer>path("chargeMovements")).isZero();
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentExpired'",
                        id.toString()))
                .isEqualTo(1);
    }

    @Test
    void aCardThatSucceedsIsCapturedAsAPaymentIntent() {
        assertThat(psp.provider()).isEqualTo("stripe");
        Response captured = captureOnce("tok_visa", 201);

        assertThat(captured.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(captured.<String>path("pspReference")).startsWith("pi_");
        assertThat(chargeMovements(captured)).isEqualTo(1);
    }

    @Test
    void aDeclinedCardIs402WithStripesDeclineCodeAndMovesNoMoney() {
        Response declined = captureOnce("tok_chargeDeclined", 402);

        assertThat(declined.<String>path("status")).isEqualTo("FAILED");
        assertThat(declined.<String>path("declineCode")).isEqualTo("generic_decline");
        assertThat(chargeMovements(declined)).isZero();
    }

    @Test
    void cardsThatNeedAuthenticationAreUnknownWithoutOpeningTheCircuit() {
        // 3-D Secure: Stripe answers requires_action. More of them than the test profile's circuit needs to open (3 of
        // 4): each is UNKNOWN for the resolver, none is a PSP failure, so the next capture still reaches Stripe.
        for (int i = 0; i < 5; i++) {
            Response pending = captureOnce("tok_authenticationRequired", 202);
            assertThat(pending.<String>path("status")).isEqualTo("UNKNOWN");
        }
        assertThat(captureOnce("tok_visa", 201).<String>path("status")).isEqualTo("CAPTURED");
    }

    @Test
    void aLostAnswerIsUnknownThenTheResolverResendsTheKeyAndStripeReplaysTheCharge() {
        // Stripe charges and keeps the answer under the key, but the answer comes after the capture's timeout
        Fixtures.faults(pspUrl, "{\"timeoutRate\":1.0}");
        String key = unique("key");
        String json = body(unique("order"), 1700, "EUR", "tok_visa");
        Response unknown = capture(KEY_A, key, json);
        unknown.then().statusCode(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(unknown.path("id"));
        noFaults();

        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return paymentStatus(pool, id).equals("CAPTURED");
                });

        assertThat(chargeMovements(unknown))
                .as("the re-sent key charged nothing more")
                .isEqualTo(1);
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("pspReference")).startsWith("pi_");
    }

    @Test
    void aPendingPaymentIntentKeepsItsIdAndAfterTheKeyWindowTheResolverRetrievesItById() {
        Response pending = captureOnce("tok_authenticationRequired", 202);
        UUID id = UUID.fromString(pending.path("id"));
        String intent = pspReference(id);
        assertThat(intent).as("Stripe's id kept from an UNKNOWN answer").startsWith("pi_");

        // first sent 25 h ago: past the adapter's window (23 h), so no re-send: a GET of the stored id
        makeOld(id, Duration.ofHours(25));
        double retrieved = pspCalls("charge_retrieve", "unknown");
        int requests = chargeRequests(id);
        resolver.runOnce().await().atMost(Duration.ofSeconds(30));

        assertThat(pspCalls("charge_retrieve", "unknown")).isEqualTo(retrieved + 1);
        assertThat(chargeRequests(id)).as("nothing sent again").isEqualTo(requests);
        assertThat(paymentStatus(pool, id))
                .as("requires_action is still unknown")
                .isEqualTo("UNKNOWN");
        assertThat(pspReference(id)).isEqualTo(intent);
    }

    @Test
    void afterTheKeyWindowWithoutAStoredIdTheResolverFindsTheChargeBySearch() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2300, "tok_visa");
        PspUnderTest.charge(id, 2300, "tok_visa"); // Stripe charged; our capture never learnt the id
        makeOld(id, Duration.ofHours(25));
        double searched = pspCalls("charge_search", "captured");
        awaitSearchShows(id);

        resolver.runOnce().await().atMost(Duration.ofSeconds(30));

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(pspCalls("charge_search", "captured")).isEqualTo(searched + 1);
        assertThat(pspReference(id)).startsWith("pi_");
        assertThat(chargeRequests(id))
                .as("only the first charge: no re-send after the window")
                .isEqualTo(1);
        assertThat(chargeMovements(id)).isEqualTo(1);
    }

    @Test
    void aKeyStripeHoldsWithOtherParametersIsUnknownWithAnOperationsItemNeverFailed() {
        // Stripe holds our payment id's key for a charge of 31.00 where we hold 30.00, and its search index does not
        // show it yet (the sandbox clock stands still): the re-send is refused with idempotency_error
        TestSupport.psp(pspUrl)
                .contentType("application/json")
                .body("{\"instant\":\"" + java.time.Instant.now() + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 3000, "tok_visa");
        PspUnderTest.charge(id, 3100, "tok_visa");

        resolver.runOnce().await().atMost(Duration.ofSeconds(30));

        assertThat(paymentStatus(pool, id)).as("never FAILED").isEqualTo("UNKNOWN");
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1"
                                + " AND reason = 'psp_charge_needs_attention' AND status = 'OPEN'"
                                + " AND details ->> 'pspAnswer' = 'idempotency_error'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM payments WHERE id = $1 AND next_attempt_at IS NOT NULL"
                                + " AND last_error = 'lookup: PspAttentionException idempotency_error'",
                        id))
                .as("the resolver keeps asking")
                .isEqualTo(1);

        // once Stripe's search shows the PaymentIntent, the resolver sees its amount: no money, psp_amount_mismatch
        TestSupport.psp(pspUrl).delete("/test/clock").then().statusCode(200);
        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(300))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return TestSupport.count(
                                    pool,
                                    "SELECT count(*) FROM operations_queue WHERE subject_id = $1"
                                            + " AND reason = 'psp_amount_mismatch'",
                                    id.toString())
                            == 1;
                });
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(TestSupport.count(
                        pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        assertThat(chargeMovements(id)).as("only the 31.00 Stripe already held").isEqualTo(1);
    }

    @Test
    void aReplayed500WhereStripeDidCreateTheIntentIsCapturedExactlyOnce() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2400, "tok_visa");
        assertThat(firstAnswer500(id, 2400).detail()).isEqualTo("http_500");
        // Stripe answered 500 but had created the PaymentIntent (the sandbox's 500 creates nothing: made here under
        // another key, with our metadata)
        TestSupport.psp(pspUrl)
                .header("Authorization", "Bearer sk_test_payments_api")
                .header("Idempotency-Key", "elsewhere-" + id)
                .contentType("application/x-www-form-urlencoded")
                .body("amount=2400&currency=eur&confirm=true&payment_method=pm_card_visa&metadata[payment_id]=" + id)
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(200);
        awaitSearchShows(id);
        double searched = pspCalls("charge_search", "captured");

        resolver.runOnce().await().atMost(Duration.ofSeconds(30));

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(pspCalls("charge_search", "captured"))
                .as("found by the metadata search")
                .isEqualTo(searched + 1);
        assertThat(pspReference(id)).startsWith("pi_");
        assertThat(chargeMovements(id)).as("charged exactly once").isEqualTo(1);
        assertThat(openAttentionItems(id)).isZero();
    }

    @Test
    void aReplayed500WhereStripeCreatedNothingStaysUnknownWithOneItemThenIsChargedAfterTheKeyWindow() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2500, "tok_visa");
        firstAnswer500(id, 2500);

        for (int attempt = 0; attempt < 2; attempt++) {
            makeDue(id);
            resolver.runOnce().await().atMost(Duration.ofSeconds(30));
        }

        assertThat(paymentStatus(pool, id)).as("never FAILED, never a new key").isEqualTo("UNKNOWN");
        assertThat(chargeRequests(id))
                .as("the first 500 and two re-sends of the same key")
                .isEqualTo(3);
        assertThat(chargeMovements(id)).isZero();
        assertThat(openAttentionItems(id)).as("one item, not one per attempt").isEqualTo(1);
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND status = 'OPEN'"
                                + " AND details ->> 'pspAnswer' LIKE 'the PSP replays a 500 under the key until %'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(TestSupport.count(
                        pool, "SELECT count(*) FROM payments WHERE id = $1 AND next_attempt_at IS NOT NULL", id))
                .as("the resolver keeps asking")
                .isEqualTo(1);

        // 25 h later Stripe has forgotten the key (the sandbox clock) and nothing is found: the resolver charges anew
        TestSupport.psp(pspUrl)
                .contentType("application/json")
                .body("{\"instant\":\"" + java.time.Instant.now().plus(Duration.ofHours(25)) + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
        makeOld(id, Duration.ofHours(25));
        makeDue(id);
        resolver.runOnce().await().atMost(Duration.ofSeconds(30));

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(chargeMovements(id)).as("charged exactly once").isEqualTo(1);
        assertThat(openAttentionItems(id))
                .as("the final outcome resolves the item")
                .isZero();
    }

    @Test
    void aRateLimitedCaptureIsRetriedWithBackoffThenUnknownNeverFailed() {
        Fixtures.faults(pspUrl, "{\"rateLimitRate\":1.0}");
        double limited = pspCalls("charge", "unknown");
        Response limitedCapture = captureOnce("tok_visa", 202);
        noFaults();
        UUID id = UUID.fromString(limitedCapture.path("id"));

        assertThat(limitedCapture.<String>path("status")).isEqualTo("UNKNOWN");
        // the retries' backoff ended inside the capture's timeout: the answer was Stripe's 429, not a timeout
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM payments WHERE id = $1 AND last_error = 'PspUnavailableException'",
                        id))
                .isEqualTo(1);
        assertThat(pspCalls("charge", "unknown")).isEqualTo(limited + 1);
        assertThat(chargeMovements(id)).isZero();
    }

    /** Our charge of the payment, first answered with a 500 that Stripe keeps under the key (nothing created). */
    private com.payments.psp.port.ChargeResult firstAnswer500(UUID id, long amount) {
        Fixtures.faults(pspUrl, "{\"errorRate\":1.0}");
        try {
            com.payments.psp.port.ChargeResult first = psp.charge(
                            new com.payments.psp.port.ChargeRequest(id.toString(), amount, "EUR", "tok_visa"))
                    .await()
                    .atMost(Duration.ofSeconds(30));
            assertThat(first.status()).isEqualTo(com.payments.psp.port.ChargeResult.Status.UNKNOWN);
            return first;
        } finally {
            noFaults();
        }
    }

    /** Stripe's search shows a PaymentIntent only a while after it was written (the sandbox: search-delay). */
    private void awaitSearchShows(UUID id) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> !TestSupport.psp(pspUrl)
                        .header("Authorization", "Bearer sk_test_payments_api")
                        .queryParam("query", "metadata['payment_id']:'" + id + "'")
                        .get("/stripe/v1/payment_intents/search")
                        .then()
                        .statusCode(200)
                        .extract()
                        .<java.util.List<Object>>path("data")
                        .isEmpty());
    }

    private long openAttentionItems(UUID id) {
        return TestSupport.count(
                pool,
                "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1"
                        + " AND reason = 'psp_charge_needs_attention' AND status = 'OPEN'",
                id.toString());
    }

    private void makeDue(UUID id) {
        pool.preparedQuery("UPDATE payments SET next_attempt_at = now() WHERE id = $1")
                .execute(io.vertx.mutiny.sqlclient.Tuple.of(id))
                .await()
                .indefinitely();
    }

    /** The payment as first sent {@code age} ago (the resolver's look-up decides by it). */
    private void makeOld(UUID id, Duration age) {
        pool.preparedQuery("UPDATE payments SET created_at = now() - make_interval(secs => $2) WHERE id = $1")
                .execute(io.vertx.mutiny.sqlclient.Tuple.of(id, (double) age.toSeconds()))
                .await()
                .indefinitely();
    }

    private String pspReference(UUID id) {
        return pool.preparedQuery("SELECT psp_reference FROM payments WHERE id = $1")
                .execute(io.vertx.mutiny.sqlclient.Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
    }

    /** The count of the adapter's timer {@code psp.calls} for a call and outcome (0 when not recorded yet). */
    private static double pspCalls(String call, String outcome) {
        String metrics = TestSupport.management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        return Math.max(
                0,
                ResolverTest.metric(
                        metrics,
                        "psp_calls_seconds_count{call=\"" + call + "\",outcome=\"" + outcome
                                + "\",provider=\"stripe\"}"));
    }

    private int chargeRequests(UUID id) {
        return TestSupport.pspCounters(pspUrl, id).path("chargeRequests");
    }

    private int chargeMovements(UUID id) {
        return TestSupport.pspCounters(pspUrl, id).path("chargeMovements");
    }

    /** A new capture of 15.00 EUR from {@code source}, answered {@code status}. */
    private static Response captureOnce(String source, int status) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), 1500, "EUR", source));
        response.then().statusCode(status);
        return response;
    }

    private int chargeMovements(Response payment) {
        return TestSupport.pspCounters(pspUrl, UUID.fromString(payment.path("id")))
                .path("chargeMovements");
    }
}
