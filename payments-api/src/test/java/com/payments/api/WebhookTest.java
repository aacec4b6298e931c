package com.payments.api;

import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.rowCounts;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.webhooks.WebhookSignature;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandbox;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/psp/webhooks}, signed as the sandbox signs (docs/psp-sandbox.md), against real PostgreSQL. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class WebhookTest {
    static final String SECRET = "whsec_sandbox_secret";

    @Inject
    Pool pool;

    @Test
    void validChargeSucceededCapturesAnUnknownPaymentOnceAndADuplicateChangesNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1500, "tok_visa");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh1", 1500, "EUR");

        Response first = deliver(event, now());
        first.then().statusCode(200);
        assertThat(first.<Boolean>path("duplicate")).isFalse();
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND psp_reference = 'ch_wh1'", id))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = 'UNKNOWN' AND to_status = 'CAPTURED' AND actor = 'webhook'",
                        id))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentCaptured'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(eventOutcome(event)).isEqualTo("applied");

        Map<String, Long> before = rowCounts(pool);
        Response again = deliver(event, now());
        again.then().statusCode(200);
        assertThat(again.<Boolean>path("duplicate")).isTrue();
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void webhookSignedAndDeliveredByTheRealSandboxCapturesThePayment() {
        // a second sandbox process whose webhooks go to this application (the shared one sends none)
        String url = "http://localhost:" + RestAssured.port + "/v1/psp/webhooks";
        try (PspSandbox sandbox = PspSandbox.start(Map.of("psp.webhook.url", url))) {
            UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2100, "tok_visa");
            Fixtures.chargeAtPsp(sandbox.url(), id, 2100, "tok_visa");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> paymentStatus(pool, id).equals("CAPTURED"));
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND actor = 'webhook'",
                            id))
                    .isEqualTo(1);
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM psp_webhook_events WHERE payload -> 'data' ->> 'reference' = $1 AND outcome = 'applied'",
                            id.toString()))
                    .isEqualTo(1);
        }
    }

    @Test
    void chargeFailedMovesAnUnknownPaymentToFailedWithTheDeclineCode() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1600, "tok_chargeDeclined");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.failed", id, "ch_wh2", 1600, "EUR")
                .replace("\"status\":\"failed\"", "\"status\":\"declined\",\"declineCode\":\"card_declined\"");
        deliver(event, now()).then().statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("FAILED");
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND decline_code = 'card_declined'", id))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
    }

    @Test
    void tamperedOrWronglySignedOrUnsignedEventsAre400AndStoreNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh3", 1700, "EUR");
        long t = now();
        String signature = WebhookSignature.sign(SECRET, t, bytes(event));
        Map<String, Long> before = rowCounts(pool);

        Response tampered = post(event.replace("1700", "17000"), signature);
        tampered.then().statusCode(400).contentType("application/problem+json");
        assertThat(tampered.<String>path("code")).isEqualTo("invalid_webhook_signature");
        post(event, WebhookSignature.sign("whsec_other", t, bytes(event)))
                .then()
                .statusCode(400);
        post(event, null).then().statusCode(400);
        post(event, "t=" + t).then().statusCode(400);
        post(event, signature.replace("t=" + t, "t=" + (t + 1))).then().statusCode(400);
        post("not json", WebhookSignature.sign(SECRET, t, bytes("not json")))
                .then()
                .statusCode(400)
                .body("code", org.hamcrest.Matchers.equalTo("invalid_webhook"));

        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void withoutAPreviousSecretAnEmptyKeySignatureIsRefused() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1750, "tok_visa");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh_empty", 1750, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response r = post(event, signWithEmptyKey(now(), bytes(event)));

        r.then().statusCode(400);
        assertThat(r.<String>path("code")).isEqualTo("invalid_webhook_signature");
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void staleOrFutureTimestampIs400AndStoresNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1800, "tok_visa");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh4", 1800, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response stale = deliver(event, now() - 600);
        stale.then().statusCode(400);
        assertThat(stale.<String>path("code")).isEqualTo("stale_webhook");
        deliver(event, now() + 600).then().statusCode(400);

        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void webhookThatSettlesAPaymentPastTheResolverDeadlineResolvesItsOperationsItem() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        UUID other = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        Fixtures.openDeadlineItem(pool, id);
        Fixtures.openDeadlineItem(pool, other);
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh_late", 1700, "EUR");
        deliver(event, now()).then().statusCode(200);

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline' AND status = 'RESOLVED' AND resolved_at IS NOT NULL AND details ->> 'resolution' = 'webhook: CAPTURED'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline' AND status = 'OPEN'",
                        other.toString()))
                .as("another payment's item stays open")
                .isEqualTo(1);
    }

    @Test
    void failedAfterSucceededNeverMovesBackAndQueuesAnOperationsItem() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1900, "tok_visa");
        deliver(chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh5", 1900, "EUR"), now())
                .then()
                .statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        Map<String, Long> before = rowCounts(pool);

        String late = chargeEvent("evt_" + UUID.randomUUID(), "charge.failed", id, "ch_wh5", 1900, "EUR");
        deliver(late, now()).then().statusCode(200);

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(eventOutcome(late)).isEqualTo("conflict");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'webhook_failed_after_captured' AND status = 'OPEN'",
                        id.toString()))
                .isEqualTo(1);
        Map<String, Long> after = rowCounts(pool);
        assertThat(after.get("psp_webhook_events")).isEqualTo(before.get("psp_webhook_events") + 1);
        assertThat(after.get("operations_queue")).isEqualTo(before.get("operations_queue") + 1);
        after.remove("psp_webhook_events");
        after.remove("operations_queue");
        before.remove("psp_webhook_events");
        before.remove("operations_queue");
        assertThat(after).as("no money, state or event change").isEqualTo(before);
    }

    @Test
    void eventAboutAPaymentWeDoNotKnowIsStoredAndQueuedForAHuman() {
        UUID stranger = UUID.randomUUID();
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", stranger, "ch_wh6", 500, "EUR");
        Map<String, Long> before = rowCounts(pool);

        deliver(event, now()).then().statusCode(200);

        assertThat(eventOutcome(event)).isEqualTo("unknown_payment");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'webhook' AND subject_id = $1 AND reason = 'unknown_payment'",
                        eventId(event)))
                .isEqualTo(1);
        Map<String, Long> after = rowCounts(pool);
        assertThat(after.get("psp_webhook_events")).isEqualTo(before.get("psp_webhook_events") + 1);
        assertThat(after.get("operations_queue")).isEqualTo(before.get("operations_queue") + 1);
        assertThat(after.get("payments")).isEqualTo(before.get("payments"));
        assertThat(after.get("outbox")).isEqualTo(before.get("outbox"));
        assertThat(after.get("ledger_entries")).isEqualTo(before.get("ledger_entries"));
    }

    @Test
    void amountThatDoesNotMatchIsQueuedAndChangesNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2000, "tok_visa");
        String event = chargeEvent("evt_" + UUID.randomUUID(), "charge.succeeded", id, "ch_wh7", 2001, "EUR");
        deliver(event, now()).then().statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(eventOutcome(event)).isEqualTo("conflict");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'psp_amount_mismatch' AND details ->> 'detectedBy' = 'webhook' AND (details -> 'data' ->> 'amount')::bigint = 2001 AND (details ->> 'paymentAmount')::bigint = 2000",
                        id.toString()))
                .as("the same item as the resolver's lookup opens (ResolverTest)")
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isZero();
    }

    @Test
    void refundEventsAreStoredAsHintsOnly() {
        String event = "{\"id\":\"evt_" + UUID.randomUUID()
                + "\",\"type\":\"refund.succeeded\",\"data\":{\"id\":\"re_1\"," + "\"reference\":\"" + UUID.randomUUID()
                + "\",\"status\":\"succeeded\",\"charge\":\"ch_1\",\"amount\":10}}";
        deliver(event, now()).then().statusCode(200);
        assertThat(eventOutcome(event)).isEqualTo("unknown_refund");
    }

    @Test
    void bodyOverTheLimitIs400() {
        String big = "{\"id\":\"evt_big\",\"type\":\"x\",\"data\":{\"pad\":\"" + "a".repeat(40_000) + "\"}}";
        Response r = deliver(big, now());
        r.then().statusCode(400);
        assertThat(r.<String>path("code")).isEqualTo("body_too_large");
        assertThat(count(pool, "SELECT count(*) FROM psp_webhook_events WHERE event_id = 'evt_big'"))
                .isZero();
    }

    /**
     * A signature under the empty key, as a receiver would accept it if it verified with an unset secret. HMAC pads
     * its key with zero bytes, so one zero byte is the same key as none (SecretKeySpec refuses an empty one).
     */
    static String signWithEmptyKey(long t, byte[] body) {
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(new byte[1], "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            return "t=" + t + ",v1=" + java.util.HexFormat.of().formatHex(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String chargeEvent(
            String eventId, String type, UUID reference, String chargeId, long amount, String currency) {
        String status = type.equals("charge.succeeded") ? "succeeded" : "failed";
        return "{\"id\":\"" + eventId + "\",\"type\":\"" + type + "\",\"data\":{\"id\":\"" + chargeId
                + "\",\"reference\":\"" + reference + "\",\"status\":\"" + status + "\",\"amount\":" + amount
                + ",\"currency\":\"" + currency + "\",\"created\":\"2026-01-01T00:00:00.000Z\"}}";
    }

    private static Response deliver(String event, long t) {
        return post(event, WebhookSignature.sign(SECRET, t, bytes(event)));
    }

    private static Response post(String event, String signature) {
        var request = given().contentType("application/json").body(bytes(event));
        if (signature != null) {
            request = request.header(WebhookSignature.HEADER, signature);
        }
        return request.post("/v1/psp/webhooks");
    }

    private String eventOutcome(String event) {
        return pool.preparedQuery("SELECT outcome FROM psp_webhook_events WHERE event_id = $1")
                .execute(Tuple.of(eventId(event)))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
    }

    private static String eventId(String event) {
        return new io.vertx.core.json.JsonObject(event).getString("id");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static long now() {
        return Instant.now().getEpochSecond();
    }
}
