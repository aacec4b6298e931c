package com.payments.api;

import static com.payments.api.PspWebhooks.bytes;
import static com.payments.api.PspWebhooks.newEventId;
import static com.payments.api.PspWebhooks.now;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.rowCounts;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandbox;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Stripe's webhooks with {@code psp.provider=stripe} (always: a test profile): disputes, which only Stripe sends
 * (an operations item and a {@code PaymentDisputed} outbox row, deduplicated, safe when the dispute comes before the
 * capture is known), a rolling secret, and end to end through psp-sandbox's Stripe mode (a dispute, and a refund that
 * fails after it was pending). {@link PspWebhookTest} covers the rest under either provider.
 */
@QuarkusTest
@TestProfile(StripeWebhookTest.Stripe.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class StripeWebhookTest {
    static final String CURRENT = "whsec_hooks_current";
    static final String PREVIOUS = "whsec_hooks_previous";

    /** Stripe, in the middle of our secret roll: two secrets. */
    public static class Stripe implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "psp.provider", "stripe",
                    "psp.stripe.api-key", "sk_test_webhooks",
                    "psp.stripe.webhook-secrets", CURRENT + "," + PREVIOUS);
        }
    }

    final PspWebhooks psp = PspWebhooks.active();

    @Inject
    Pool pool;

    @Test
    void disputeOfACapturedPaymentOpensAnItemAndWritesPaymentDisputedOnce() {
        Fixtures.Refunded p = Fixtures.pendingRefund(pool, 7000, 500);
        String event = psp.dispute(newEventId(), "dp_one", p.charge(), 7000, "EUR");

        Response first = psp.deliver(event);

        first.then().statusCode(200);
        assertThat(first.<Boolean>path("duplicate")).isFalse();
        assertThat(eventOutcome(event)).isEqualTo("applied");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'payment_disputed' AND status = 'OPEN' AND details ->> 'disputeId' = 'dp_one' AND details ->> 'disputeReason' = 'fraudulent' AND (details ->> 'disputedAmount')::bigint = 7000",
                        p.paymentId().toString()))
                .isEqualTo(1);
        JsonObject payload = disputedEvent(p.paymentId());
        assertThat(payload.getString("type")).isEqualTo("PaymentDisputed");
        assertThat(payload.getString("paymentId")).isEqualTo(p.paymentId().toString());
        assertThat(payload.getString("merchantId")).isEqualTo(Fixtures.MERCHANT_A.toString());
        assertThat(payload.getString("orderId")).isEqualTo("order-" + p.paymentId());
        assertThat(payload.getLong("amount")).isEqualTo(7000);
        assertThat(payload.getString("currency")).isEqualTo("EUR");
        assertThat(payload.getString("pspReference")).isEqualTo(p.charge());
        assertThat(payload.getString("disputeId")).isEqualTo("dp_one");
        assertThat(payload.getString("reason")).isEqualTo("fraudulent");
        assertThat(payload.getJsonObject("metadata")).isEqualTo(new JsonObject());
        assertThat(payload.getString("eventId")).isNotBlank();
        assertThat(paymentStatus(pool, p.paymentId()))
                .as("a dispute moves no state")
                .isEqualTo("CAPTURED");

        Map<String, Long> before = rowCounts(pool);
        Response again = psp.deliver(event);
        again.then().statusCode(200);
        assertThat(again.<Boolean>path("duplicate")).isTrue();
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void disputeBeforeTheCaptureIsKnownIsRefusedUntilThePaymentIntentIsOurs() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2500, "tok_visa");
        String intent = "pi_early_" + id.toString().substring(0, 8);
        String dispute = psp.dispute(newEventId(), "dp_early", intent, 2500, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response early = psp.deliver(dispute);

        early.then().statusCode(409).contentType("application/problem+json");
        assertThat(early.<String>path("code")).isEqualTo("webhook_charge_not_yet_known");
        assertThat(rowCounts(pool))
                .as("nothing stored: the PSP delivers it again")
                .isEqualTo(before);

        psp.deliver(psp.chargeSucceeded(newEventId(), id, intent, 2500, "EUR"))
                .then()
                .statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        psp.deliver(dispute).then().statusCode(200);

        assertThat(eventOutcome(dispute)).isEqualTo("applied");
        assertThat(disputedEvent(id).getString("disputeId")).isEqualTo("dp_early");
    }

    @Test
    void disputeOfAChargeNobodyKnowsIsQueuedOnceItsWaitIsOver() {
        String dispute = psp.dispute(
                newEventId(),
                "dp_stranger",
                "pi_stranger",
                900,
                "EUR",
                Instant.now().minus(Duration.ofHours(2)));

        psp.deliver(dispute).then().statusCode(200);

        assertThat(eventOutcome(dispute)).isEqualTo("unknown_payment");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'webhook' AND subject_id = $1 AND reason = 'unknown_payment'",
                        eventId(dispute)))
                .isEqualTo(1);
    }

    @Test
    void whileSecretsRollEitherSecretAndEitherOfStripesSignaturesIsAccepted() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1300, "tok_visa");
        String event = psp.chargeSucceeded(newEventId(), id, "pi_roll_1", 1300, "EUR");
        // Stripe rolling its secret signs with the new one (unknown to us yet) and the old one (ours)
        psp.post(event, PspWebhooks.signWithEach(now(), bytes(event), "whsec_stripe_next", PREVIOUS))
                .then()
                .statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");

        UUID other = Fixtures.insertPayment(pool, "UNKNOWN", 1400, "tok_visa");
        String second = psp.chargeSucceeded(newEventId(), other, "pi_roll_2", 1400, "EUR");
        psp.post(second, PspWebhooks.sign(CURRENT, now(), bytes(second))).then().statusCode(200);
        assertThat(paymentStatus(pool, other)).isEqualTo("CAPTURED");

        UUID third = Fixtures.insertPayment(pool, "UNKNOWN", 1500, "tok_visa");
        String refused = psp.chargeSucceeded(newEventId(), third, "pi_roll_3", 1500, "EUR");
        Map<String, Long> before = rowCounts(pool);
        Response r = psp.post(refused, PspWebhooks.signWithEach(now(), bytes(refused), "whsec_a", "whsec_b"));
        r.then().statusCode(400);
        assertThat(r.<String>path("code")).isEqualTo("invalid_webhook_signature");
        Response stale = psp.post(refused, PspWebhooks.sign(PREVIOUS, now() - 301, bytes(refused)));
        stale.then().statusCode(400);
        assertThat(stale.<String>path("code")).isEqualTo("stale_webhook");
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void endToEndThroughTheSandboxsStripeModeADisputeAndALateRefundFailure() {
        String url = "http://localhost:" + RestAssured.port + "/v1/psp/stripe/webhooks";
        // the sandbox signs with both secrets, one v1 each (as Stripe does while it rolls)
        try (PspSandbox sandbox = PspSandbox.start(
                Map.of("psp.stripe.webhook-url", url, "psp.stripe.webhook-secrets", CURRENT + "," + PREVIOUS))) {
            // a dispute: the sandbox sends payment_intent.succeeded and charge.dispute.created at once, in any order
            UUID disputed = Fixtures.insertPayment(pool, "UNKNOWN", 3300, "tok_visa");
            charge(sandbox, disputed, 3300, "pm_card_createDispute");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> count(
                                    pool,
                                    "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentDisputed'",
                                    disputed.toString())
                            == 1);
            assertThat(paymentStatus(pool, disputed)).isEqualTo("CAPTURED");
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'payment_disputed' AND details ->> 'disputeId' LIKE 'dp_%'",
                            disputed.toString()))
                    .isEqualTo(1);

            // a refund Stripe answers pending and fails later: refund.created, then refund.updated and refund.failed
            UUID paid = Fixtures.insertPayment(pool, "UNKNOWN", 4000, "tok_visa");
            charge(sandbox, paid, 4000, "pm_card_refundFail");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> paymentStatus(pool, paid).equals("CAPTURED"));
            UUID refundId = reserveRefund(paid, 1500);
            String intent = single("SELECT psp_reference FROM payments WHERE id = $1", paid);
            TestSupport.psp(sandbox.url())
                    .header("Authorization", "Bearer sk_test_webhooks")
                    .header("Idempotency-Key", refundId.toString())
                    .contentType("application/x-www-form-urlencoded")
                    .formParam("payment_intent", intent)
                    .formParam("amount", 1500)
                    .formParam("metadata[refund_id]", refundId.toString())
                    .formParam("metadata[payment_id]", paid.toString())
                    .post("/stripe/v1/refunds")
                    .then()
                    .statusCode(200)
                    .body("status", org.hamcrest.Matchers.equalTo("pending"));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> count(
                                    pool,
                                    "SELECT count(*) FROM psp_webhook_events WHERE payload -> 'data' -> 'object' -> 'metadata' ->> 'refund_id' = $1 AND processed_at IS NOT NULL",
                                    refundId.toString())
                            == 3);
            assertThat(single("SELECT status FROM refunds WHERE id = $1", refundId))
                    .isEqualTo("FAILED");
            assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paid))
                    .as("released once")
                    .isZero();
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'RefundFailed'",
                            paid.toString()))
                    .isEqualTo(1);
        }
    }

    @Test
    void endToEndThroughTheSandboxsStripeModeAPartialCaptureSettlesWithItsCapturedAmount() {
        String url = "http://localhost:" + RestAssured.port + "/v1/psp/stripe/webhooks";
        try (PspSandbox sandbox =
                PspSandbox.start(Map.of("psp.stripe.webhook-url", url, "psp.stripe.webhook-secrets", CURRENT))) {
            // a manual payment of 1000 authorized at Stripe, whose capture of 600 we sent (CAPTURING)
            UUID id = UUID.randomUUID();
            exec(
                    "INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, capture_method)"
                            + " VALUES ($1, $2, $3, 1000, 'EUR', 'pm_card_visa', 'AUTHORIZING', 'MANUAL')",
                    id,
                    Fixtures.MERCHANT_A,
                    "order-" + id);
            String intent = TestSupport.psp(sandbox.url())
                    .header("Authorization", "Bearer sk_test_webhooks")
                    .header("Idempotency-Key", id.toString())
                    .contentType("application/x-www-form-urlencoded")
                    .formParam("amount", 1000)
                    .formParam("currency", "eur")
                    .formParam("confirm", "true")
                    .formParam("capture_method", "manual")
                    .formParam("payment_method", "pm_card_visa")
                    .formParam("metadata[payment_id]", id.toString())
                    .post("/stripe/v1/payment_intents")
                    .then()
                    .statusCode(200)
                    .extract()
                    .path("id");
            exec("UPDATE payments SET status = 'AUTHORIZED', psp_reference = $2 WHERE id = $1", id, intent);
            exec("UPDATE payments SET status = 'CAPTURING', captured_amount = 600 WHERE id = $1", id);

            TestSupport.psp(sandbox.url())
                    .header("Authorization", "Bearer sk_test_webhooks")
                    .header("Idempotency-Key", "capture-" + id)
                    .contentType("application/x-www-form-urlencoded")
                    .formParam("amount_to_capture", 600)
                    .post("/stripe/v1/payment_intents/" + intent + "/capture")
                    .then()
                    .statusCode(200)
                    .body("amount_received", org.hamcrest.Matchers.equalTo(600));

            // payment_intent.succeeded with amount_received 600: the captured amount, not the authorized 1000
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> count(
                                    pool,
                                    "SELECT count(*) FROM psp_webhook_events WHERE payload ->> 'type' = 'payment_intent.succeeded'"
                                            + " AND payload -> 'data' -> 'object' -> 'metadata' ->> 'payment_id' = $1"
                                            + " AND processed_at IS NOT NULL",
                                    id.toString())
                            >= 1);
            assertThat(single(
                            "SELECT outcome FROM psp_webhook_events WHERE payload ->> 'type' = 'payment_intent.succeeded'"
                                    + " AND payload -> 'data' -> 'object' -> 'metadata' ->> 'payment_id' = $1",
                            id.toString()))
                    .isEqualTo("applied");
            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'psp_amount_mismatch'",
                            id.toString()))
                    .isZero();
            assertThat(count(
                            pool,
                            "SELECT coalesce(sum(e.amount), 0) FROM ledger_transactions t JOIN ledger_entries e ON"
                                    + " e.transaction_id = t.id WHERE t.kind = 'CAPTURE' AND t.reference = $1"
                                    + " AND e.account = 'psp_receivable'",
                            id.toString()))
                    .isEqualTo(600);
            assertThat(new JsonObject(single(
                                    "SELECT payload::text FROM outbox WHERE key = $1 AND event_type = 'PaymentCaptured'",
                                    id.toString()))
                            .getLong("capturedAmount"))
                    .isEqualTo(600L);
        }
    }

    private void exec(String sql, Object... args) {
        pool.preparedQuery(sql).execute(Tuple.from(args)).await().indefinitely();
    }

    private static void charge(PspSandbox sandbox, UUID id, long amount, String paymentMethod) {
        TestSupport.psp(sandbox.url())
                .header("Authorization", "Bearer sk_test_webhooks")
                .header("Idempotency-Key", id.toString())
                .contentType("application/x-www-form-urlencoded")
                .formParam("amount", amount)
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method", paymentMethod)
                .formParam("metadata[payment_id]", id.toString())
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(200);
    }

    /** What payments-api's refund request does: reserve the amount and insert the refund PENDING. */
    private UUID reserveRefund(UUID paymentId, long amount) {
        UUID refundId = UUID.randomUUID();
        pool.withTransaction(conn -> conn.preparedQuery(
                                "UPDATE payments SET refunded_amount = refunded_amount + $2 WHERE id = $1")
                        .execute(Tuple.of(paymentId, amount))
                        .chain(() -> conn.preparedQuery(
                                        "INSERT INTO refunds (id, payment_id, merchant_id, amount, currency) VALUES ($1, $2, $3, $4, 'EUR')")
                                .execute(Tuple.of(refundId, paymentId, Fixtures.MERCHANT_A, amount))))
                .await()
                .indefinitely();
        return refundId;
    }

    private JsonObject disputedEvent(UUID paymentId) {
        return new JsonObject(single(
                "SELECT payload::text FROM outbox WHERE key = $1::text AND event_type = 'PaymentDisputed'",
                paymentId.toString()));
    }

    private String eventOutcome(String event) {
        return single("SELECT outcome FROM psp_webhook_events WHERE event_id = $1", eventId(event));
    }

    private String single(String sql, Object arg) {
        return pool.preparedQuery(sql)
                .execute(Tuple.of(arg))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
    }

    private static String eventId(String event) {
        return new JsonObject(event).getString("id");
    }
}
