package com.payments.system;

import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Webhooks end to end (issue 24): real payments of a merchant through the packaged payments-api, the outbox,
 * outbox-relay, Kafka {@code payment-events} and webhook-delivery to a receiver on loopback started here
 * ({@link WebhookReceiver}), which verifies every Standard Webhooks signature with the secret of the endpoint's
 * registration.
 *
 * <p>The PSP is psp-sandbox's Stripe mode (docs/psp-sandbox.md), the one that produces every event type a merchant can
 * subscribe to from calls of the merchant API alone (whose {@code source} is a {@code tok_} token): {@code tok_visa}
 * is captured (PaymentCaptured) and refunded by refunds-worker (RefundSucceeded), {@code tok_chargeDeclined} is
 * declined (PaymentFailed), a refund of {@code tok_refundFail} is pending and then fails ({@code refund.failed} to
 * payments-api's Stripe route: RefundFailed), and {@code tok_createDispute} is captured and then disputed
 * ({@code charge.dispute.created}:
 * PaymentDisputed). The sandbox protocol has no disputes.
 */
class WebhookEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final String STRIPE_KEY = "sk_test_webhooks_e2e";
    private static final String STRIPE_SECRET = "whsec_webhooks_e2e";
    private static final String OPERATOR = "test-operator-token";
    /** What the flows below produce in the merchant's feed, by type. */
    private static final Map<String, Long> EXPECTED = Map.of(
            "PaymentCaptured", 3L,
            "PaymentFailed", 1L,
            "RefundSucceeded", 1L,
            "RefundFailed", 1L,
            "PaymentDisputed", 1L);

    @Test
    void everyEventOfTheMerchantIsDeliveredSignedAndAsTheFeedShowsIt() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("webhooks");
        String bootstrap = Kafka.bootstrapServers();
        Stack.recreateTopics();
        List<AutoCloseable> processes = new ArrayList<>();
        try (WebhookReceiver receiver = WebhookReceiver.start()) {
            // the sandbox sends its Stripe events to payments-api, which calls the sandbox: payments-api's port first
            int apiPort = QuarkusProcess.freePort();
            PspSandbox psp = PspSandbox.start(Map.of(
                    "psp.stripe.webhook-url", "http://127.0.0.1:" + apiPort + "/v1/psp/stripe/webhooks",
                    "psp.stripe.webhook-secrets", STRIPE_SECRET,
                    "psp.stripe.refund-failure-delay", "300ms",
                    // a dispute that overtakes its payment's capture is answered 409 and sent again
                    "psp.webhook.initial-backoff", "100ms",
                    "psp.webhook.max-backoff", "500ms"));
            processes.add(psp);
            QuarkusProcess api = Stack.paymentsApi(
                    db,
                    psp.url(),
                    Map.of(
                            "quarkus.http.port",
                            Integer.toString(apiPort),
                            "psp.provider",
                            "stripe",
                            "psp.stripe.api-key",
                            STRIPE_KEY,
                            "psp.stripe.webhook-secrets",
                            STRIPE_SECRET,
                            // the test profile has them too; said here because the test depends on them
                            "payments.webhooks.allow-http",
                            "true",
                            "payments.webhooks.allow-loopback",
                            "true"));
            processes.add(api);
            Merchant.use(api);
            Map<String, String> relay = new HashMap<>(Stack.datasource(db));
            relay.put("kafka.bootstrap.servers", bootstrap);
            relay.put("quarkus.log.level", "WARN");
            processes.add(QuarkusProcess.start("outbox-relay", "256m", relay));
            Map<String, String> worker = new HashMap<>(relay);
            worker.put("psp.provider", "stripe");
            worker.put("psp.stripe.api-key", STRIPE_KEY);
            worker.put("psp.stripe.api-base", psp.url() + "/stripe");
            processes.add(QuarkusProcess.start("refunds-worker", "256m", worker));
            processes.add(Stack.webhookDelivery(db, bootstrap, Map.of()));
            // demo merchant A's captures: a cold payments-api's first PSP calls can outlast its timeout
            Merchant.warmUp(psp.url());

            // a merchant of its own, so that its feed holds exactly the events of this test
            Response created = given().header("Authorization", "Bearer " + OPERATOR)
                    .contentType(ContentType.JSON)
                    .body("{\"name\":\"" + unique("webhooks-e2e") + "\"}")
                    .post("/v1/admin/merchants");
            created.then().statusCode(201);
            String apiKey = created.path("apiKey");
            String merchantId = created.path("merchantId");
            Response endpoint = merchant(apiKey)
                    .contentType(ContentType.JSON)
                    .body(new JsonObject()
                            .put("url", receiver.url())
                            .put("events", new JsonArray().add("*"))
                            .encode())
                    .post("/v1/webhook_endpoints");
            endpoint.then().statusCode(201);
            assertThat(endpoint.<String>path("status")).isEqualTo("ENABLED");
            receiver.secret(endpoint.path("secret"));
            String endpointId = endpoint.path("id");

            UUID refunded = captured(apiKey, "tok_visa", 5_000);
            Response declined =
                    capture(apiKey, unique("key"), body(unique("order"), 1_200, "EUR", "tok_chargeDeclined"));
            declined.then().statusCode(402);
            assertThat(declined.<String>path("status")).isEqualTo("FAILED");
            UUID failed = UUID.fromString(declined.path("id"));
            UUID refundFails = captured(apiKey, "tok_refundFail", 4_000);
            UUID disputed = captured(apiKey, "tok_createDispute", 3_300);
            UUID refundOk = refund(apiKey, refunded, 2_000);
            UUID refundFailed = refund(apiKey, refundFails, 1_500);
            awaitRefund(apiKey, refundOk, "SUCCEEDED");
            awaitRefund(apiKey, refundFailed, "FAILED");

            // the feed holds every event of the flows above (its transaction is the outbox row's)...
            await().atMost(OUTCOME)
                    .pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> assertThat(countByType(feed(apiKey))).isEqualTo(EXPECTED));
            List<JsonObject> events = feed(apiKey);
            assertThat(Merchant.count(
                            db, "SELECT count(*) FROM merchant_events WHERE merchant_id = ?::uuid", merchantId))
                    .as("the feed lists every row of merchant_events")
                    .isEqualTo(events.size());
            assertThat(events.stream().map(e -> e.getJsonObject("data").getString("paymentId")))
                    .containsOnly(refunded.toString(), failed.toString(), refundFails.toString(), disputed.toString());
            // each payment's events carry versions 1, 2, ... in the feed's order (newest first here), the dispute's
            // included, and the newest one's payment is the payment as it is now (every refund has settled)
            Map<String, List<JsonObject>> byPayment = events.stream()
                    .collect(Collectors.groupingBy(e -> e.getJsonObject("data").getString("paymentId")));
            byPayment.forEach((payment, its) -> {
                List<Long> versions = new ArrayList<>();
                for (int v = its.size(); v >= 1; v--) {
                    versions.add((long) v);
                }
                assertThat(its.stream().map(e -> e.getLong("version")).toList())
                        .as(payment)
                        .isEqualTo(versions);
                Response now = merchant(apiKey).get("/v1/payments/" + payment);
                JsonObject state = its.get(0).getJsonObject("payment");
                assertThat(state.getString("status")).as(payment).isEqualTo(now.path("status"));
                assertThat(state.getLong("refundedAmount"))
                        .as(payment)
                        .isEqualTo(now.<Number>path("refundedAmount").longValue());
            });
            assertThat(byPayment.get(disputed.toString()).stream().map(e -> e.getString("type")))
                    .containsExactly("PaymentDisputed", "PaymentCaptured");
            JsonObject refundedNow = byPayment.get(refunded.toString()).get(0).getJsonObject("payment");
            assertThat(refundedNow.getLong("refundedAmount")).isEqualTo(2_000L);
            Map<String, JsonObject> byId = events.stream()
                    .collect(Collectors.toMap(
                            e -> e.getString("id"), Function.identity(), (a, b) -> a, LinkedHashMap::new));

            // ... and the receiver got each of them with a valid signature
            await().atMost(OUTCOME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> assertThat(
                            receiver.received().stream()
                                    .filter(WebhookReceiver.Received::signatureValid)
                                    .map(r -> r.header("webhook-id"))
                                    .collect(Collectors.toSet()))
                    .containsAll(byId.keySet()));
            List<WebhookReceiver.Received> received = receiver.received();
            assertThat(received)
                    .as("no request without a valid signature")
                    .allMatch(WebhookReceiver.Received::signatureValid);
            Instant now = Instant.now();
            for (WebhookReceiver.Received request : received) {
                assertThat(request.method()).isEqualTo("POST");
                assertThat(request.path()).isEqualTo("/webhooks");
                assertThat(request.header("content-type")).startsWith("application/json");
                assertThat(Instant.ofEpochSecond(Long.parseLong(request.header("webhook-timestamp"))))
                        .isBetween(now.minus(OUTCOME).minusSeconds(60), now.plusSeconds(5));
                String id = request.header("webhook-id");
                assertThat(byId).as("an event of this merchant: " + request).containsKey(id);
                JsonObject delivered = new JsonObject(request.bodyText());
                assertThat(delivered.getString("id")).isEqualTo(id);
                // the event as the API shows it, compared as parsed JSON: whatever fields it has
                JsonObject shown = new JsonObject(merchant(apiKey)
                        .get("/v1/events/" + id)
                        .then()
                        .statusCode(200)
                        .extract()
                        .asString());
                assertThat(delivered).as(request.toString()).isEqualTo(shown);
                assertThat(shown).isEqualTo(byId.get(id));
            }
            assertThat(received.stream().map(r -> new JsonObject(r.bodyText()).getString("type")))
                    .containsAll(EXPECTED.keySet());

            // webhook-delivery recorded the outcome: one delivery per event, all SUCCEEDED
            await().atMost(OUTCOME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                JsonArray deliveries = new JsonObject(merchant(apiKey)
                                .get("/v1/webhook_endpoints/" + endpointId + "/deliveries?limit=100")
                                .then()
                                .statusCode(200)
                                .extract()
                                .asString())
                        .getJsonArray("data");
                assertThat(deliveries.stream()
                                .map(d -> ((JsonObject) d).getString("eventId"))
                                .collect(Collectors.toList()))
                        .containsExactlyInAnyOrderElementsOf(byId.keySet());
                assertThat(deliveries.stream().map(d -> ((JsonObject) d).getString("status")))
                        .containsOnly("SUCCEEDED");
            });
        } finally {
            Stack.stopAll(processes);
        }
    }

    private static UUID captured(String apiKey, String source, long amount) {
        Response response = capture(apiKey, unique("key"), body(unique("order"), amount, "EUR", source));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    private static UUID refund(String apiKey, UUID paymentId, long amount) {
        Response response = merchant(apiKey)
                .header("Idempotency-Key", unique("r"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + paymentId + "/refunds");
        response.then().statusCode(202);
        return UUID.fromString(response.path("refundId"));
    }

    private static void awaitRefund(String apiKey, UUID refundId, String status) {
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(apiKey).get("/v1/refunds/" + refundId).path("status"), status::equals);
    }

    /** The merchant's whole feed (one page: the flows make fewer than 100 events). */
    private static List<JsonObject> feed(String apiKey) {
        JsonObject page = new JsonObject(merchant(apiKey)
                .get("/v1/events?limit=100")
                .then()
                .statusCode(200)
                .extract()
                .asString());
        assertThat(page.getBoolean("has_more")).isFalse();
        return page.getJsonArray("data").stream().map(JsonObject.class::cast).toList();
    }

    private static Map<String, Long> countByType(List<JsonObject> events) {
        return events.stream().collect(Collectors.groupingBy(e -> e.getString("type"), Collectors.counting()));
    }
}
