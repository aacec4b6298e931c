package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Stripe-compatible mode under /stripe: shapes, idempotency, errors, test cards, lists, report and events. */
@QuarkusTest
@WithTestResource(value = StripeWebhookReceiver.class, scope = TestResourceScope.GLOBAL)
class StripeModeTest {

    static final String KEY = "Bearer sk_test_sandbox";
    static final Duration WAIT = Duration.ofSeconds(15);
    final ObjectMapper mapper = new ObjectMapper();

    @TestHTTPResource("/")
    URL base;

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    static RequestSpecification stripe() {
        return given().header("Authorization", KEY).contentType("application/x-www-form-urlencoded");
    }

    /** A PaymentIntent created and confirmed at once, as the adapter sends it. */
    static Response intent(String key, String paymentId, long amount, String paymentMethod) {
        RequestSpecification spec = stripe().formParam("amount", amount)
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method_types[]", "card")
                .formParam("metadata[payment_id]", paymentId);
        if (paymentMethod.startsWith("tok_")) {
            spec.formParam("payment_method_data[type]", "card")
                    .formParam("payment_method_data[card][token]", paymentMethod);
        } else {
            spec.formParam("payment_method", paymentMethod);
        }
        if (key != null) {
            spec.header("Idempotency-Key", key);
        }
        return spec.post("/stripe/v1/payment_intents");
    }

    static Response refund(String key, String intentId, Long amount, String refundId) {
        RequestSpecification spec = stripe().formParam("payment_intent", intentId)
                .formParam("metadata[refund_id]", refundId)
                .header("Idempotency-Key", key);
        if (amount != null) {
            spec.formParam("amount", amount);
        }
        return spec.post("/stripe/v1/refunds");
    }

    @Test
    void aConfirmedIntentIsCapturedAndItsKeyReplaysTheFirstAnswer() {
        String pay = unique("pay");
        Response first = intent(pay, pay, 2500, "pm_card_visa");
        first.then()
                .statusCode(200)
                .header("Request-Id", startsWith("req_"))
                .header("Stripe-Version", equalTo("2025-03-31.basil"))
                .body("object", equalTo("payment_intent"))
                .body("id", startsWith("pi_"))
                .body("status", equalTo("succeeded"))
                .body("amount", equalTo(2500))
                .body("amount_received", equalTo(2500))
                .body("currency", equalTo("eur"))
                .body("capture_method", equalTo("automatic"))
                .body("latest_charge", startsWith("ch_"))
                .body("metadata.payment_id", equalTo(pay));
        assertNull(first.getHeader("Idempotent-Replayed"));

        Response again = intent(pay, pay, 2500, "pm_card_visa");
        again.then().statusCode(200).header("Idempotent-Replayed", equalTo("true"));
        assertEquals(first.asString(), again.asString(), "the replay is the first answer, byte for byte");
        Counters counted = counters(pay);
        assertEquals(2, counted.chargeRequests());
        assertEquals(1, counted.chargeMovements(), "one charge, however often the key is sent");

        intent(pay, pay, 9999, "pm_card_visa")
                .then()
                .statusCode(400)
                .header("Stripe-Should-Retry", equalTo("false"))
                .body("error.type", equalTo("idempotency_error"));
        assertEquals(1, counters(pay).chargeMovements());
    }

    @Test
    void declinesAre402CardErrorsWithTheirDeclineCodeAndAreKeptUnderTheKey() {
        String pay = unique("pay");
        Response declined = intent(pay, pay, 1000, "pm_card_chargeDeclined");
        declined.then()
                .statusCode(402)
                .body("error.type", equalTo("card_error"))
                .body("error.code", equalTo("card_declined"))
                .body("error.decline_code", equalTo("generic_decline"))
                .body("error.charge", startsWith("ch_"))
                .body("error.payment_intent.status", equalTo("requires_payment_method"))
                .body("error.payment_intent.last_payment_error.decline_code", equalTo("generic_decline"));
        Response replay = intent(pay, pay, 1000, "pm_card_chargeDeclined");
        replay.then().statusCode(402).header("Idempotent-Replayed", equalTo("true"));
        assertEquals(declined.asString(), replay.asString());
        assertEquals(0, counters(pay).chargeMovements());

        String poor = unique("pay");
        intent(poor, poor, 1000, "tok_chargeDeclinedInsufficientFunds")
                .then()
                .statusCode(402)
                .body("error.decline_code", equalTo("insufficient_funds"));
        String action = unique("pay");
        intent(action, action, 1000, "pm_card_authenticationRequired")
                .then()
                .statusCode(200)
                .body("status", equalTo("requires_action"))
                .body("next_action.type", equalTo("use_stripe_sdk"));
    }

    @Test
    void withoutAValidKeyItIs401AndInvalidParametersAre400WithoutUsingTheKey() {
        given().contentType("application/x-www-form-urlencoded")
                .formParam("amount", 100)
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(401)
                .body("error.type", equalTo("invalid_request_error"));
        given().header("Authorization", "Bearer pk_live_nope")
                .get("/stripe/v1/payment_intents/pi_x")
                .then()
                .statusCode(401);

        String pay = unique("pay");
        stripe().header("Idempotency-Key", pay)
                .formParam("amount", "12.50")
                .formParam("currency", "eur")
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(400)
                .body("error.type", equalTo("invalid_request_error"))
                .body("error.code", equalTo("parameter_invalid_integer"))
                .body("error.param", equalTo("amount"));
        stripe().header("Idempotency-Key", pay)
                .formParam("amount", "100")
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method", "4242 4242 4242 4242")
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("resource_missing"))
                .body("error.message", org.hamcrest.Matchers.not(org.hamcrest.Matchers.containsString("4242")));
        intent(pay, pay, 100, "pm_card_visa").then().statusCode(200).body("status", equalTo("succeeded"));
        stripe().get("/stripe/v1/nothing_here")
                .then()
                .statusCode(404)
                .body("error.type", equalTo("invalid_request_error"));
    }

    @Test
    void aSecondRequestWhileTheFirstRunsIs409AndOnlyOneChargeIsMade() throws Exception {
        Sandbox.faults("{\"latencyFixedMs\":600}");
        String pay = unique("pay");
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> statuses = new ArrayList<>();
            String form =
                    "amount=700&currency=eur&confirm=true&payment_method=pm_card_visa&metadata%5Bpayment_id%5D=" + pay;
            for (int i = 0; i < threads; i++) {
                HttpClient client = HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .build();
                HttpRequest request = HttpRequest.newBuilder(base.toURI().resolve("/stripe/v1/payment_intents"))
                        .header("Authorization", KEY)
                        .header("Idempotency-Key", pay)
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(form))
                        .build();
                statuses.add(pool.submit(() -> {
                    go.await();
                    return client.send(request, HttpResponse.BodyHandlers.discarding())
                            .statusCode();
                }));
            }
            go.countDown();
            List<Integer> answered = new ArrayList<>();
            for (Future<Integer> status : statuses) {
                answered.add(status.get());
            }
            assertEquals(1, answered.stream().filter(s -> s == 200).count(), answered.toString());
            assertEquals(threads - 1, answered.stream().filter(s -> s == 409).count(), answered.toString());
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, counters(pay).chargeMovements());
        Sandbox.faults("{\"latencyFixedMs\":0}");
        stripe().header("Idempotency-Key", pay)
                .formParam("amount", 700)
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method", "pm_card_visa")
                .formParam("metadata[payment_id]", pay)
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", equalTo("true"));
    }

    @Test
    void aKeyExpiresAfter24HoursOnTheSandboxClock() {
        Sandbox.freezeClock("2031-03-10T10:00:00Z");
        String pay = unique("pay");
        String first = intent(pay, pay, 300, "pm_card_visa").path("id");
        Sandbox.freezeClock("2031-03-11T09:59:59Z");
        assertEquals(first, intent(pay, pay, 300, "pm_card_visa").path("id"), "still kept after 23:59:59");
        Sandbox.freezeClock("2031-03-11T10:00:00Z");
        Response after = intent(pay, pay, 300, "pm_card_visa");
        assertNull(after.getHeader("Idempotent-Replayed"));
        assertNotEquals(first, after.path("id"), "after 24 hours the key is new again: a second charge");
        assertEquals(2, counters(pay).chargeMovements());
    }

    @Test
    void retrieveAnswersAtOnceAndSearchLagsBehindWrites() {
        Sandbox.freezeClock("2031-07-01T10:00:00Z");
        String pay = unique("pay");
        String id = intent(pay, pay, 4200, "tok_visa").path("id");
        String query = "metadata['payment_id']:'" + pay + "'";
        stripe().queryParam("query", query)
                .get("/stripe/v1/payment_intents/search")
                .then()
                .statusCode(200)
                .body("object", equalTo("search_result"))
                .body("data", hasSize(0));
        stripe().get("/stripe/v1/payment_intents/{id}", id)
                .then()
                .statusCode(200)
                .body("status", equalTo("succeeded"))
                .body("payment_method", startsWith("pm_"));
        stripe().get("/stripe/v1/payment_intents/pi_doesnotexist")
                .then()
                .statusCode(404)
                .body("error.code", equalTo("resource_missing"));
        Sandbox.freezeClock("2031-07-01T10:00:01Z");
        stripe().queryParam("query", query)
                .get("/stripe/v1/payment_intents/search")
                .then()
                .body("data", hasSize(1))
                .body("data[0].id", equalTo(id));
        stripe().queryParam("query", query + " AND status:'requires_action'")
                .get("/stripe/v1/payment_intents/search")
                .then()
                .body("data", hasSize(0));
    }

    @Test
    void refundsAreLimitedToTheChargeAndListedByPaymentIntent() {
        String pay = unique("pay");
        String intentId = intent(pay, pay, 5000, "pm_card_visa").path("id");
        String ref = unique("ref");
        Response refunded = refund(ref, intentId, 2000L, ref);
        refunded.then()
                .statusCode(200)
                .body("object", equalTo("refund"))
                .body("id", startsWith("re_"))
                .body("status", equalTo("succeeded"))
                .body("amount", equalTo(2000))
                .body("payment_intent", equalTo(intentId))
                .body("metadata.refund_id", equalTo(ref));
        assertEquals(refunded.asString(), refund(ref, intentId, 2000L, ref).asString());
        assertEquals(1, counters(ref).refundMovements());

        String tooMuch = unique("ref");
        refund(tooMuch, intentId, 3001L, tooMuch)
                .then()
                .statusCode(400)
                .body("error.code", equalTo("amount_too_large"));
        String rest = unique("ref");
        refund(rest, intentId, null, rest).then().statusCode(200).body("amount", equalTo(3000));
        String none = unique("ref");
        refund(none, intentId, null, none)
                .then()
                .statusCode(400)
                .body("error.code", equalTo("charge_already_refunded"));

        stripe().get("/stripe/v1/refunds/{id}", refunded.path("id").toString())
                .then()
                .statusCode(200)
                .body("amount", equalTo(2000));
        stripe().queryParam("payment_intent", intentId)
                .get("/stripe/v1/refunds")
                .then()
                .statusCode(200)
                .body("data", hasSize(2));
        refund(unique("ref"), "pi_unknown", 1L, "x")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("resource_missing"));
    }

    @Test
    void aRefundOfRefundFailGoesPendingThenFailedAndComesBack() {
        String pay = unique("pay");
        String intentId = intent(pay, pay, 800, "pm_card_refundFail").path("id");
        String ref = unique("ref");
        String refundId = refund(ref, intentId, 800L, ref)
                .then()
                .statusCode(200)
                .body("status", equalTo("pending"))
                .extract()
                .path("id");
        await().atMost(WAIT).untilAsserted(() -> stripe().get("/stripe/v1/refunds/{id}", refundId)
                .then()
                .body("status", equalTo("failed"))
                .body("failure_reason", equalTo("expired_or_canceled_card"))
                .body("failure_balance_transaction", startsWith("txn_")));
        assertEquals(0, counters(ref).refundMovements());
        String again = unique("ref");
        refund(again, intentId, 800L, again).then().statusCode(200);
        await().atMost(WAIT).until(() -> StripeWebhookReceiver.about(refundId).stream()
                .anyMatch(r -> r.text().contains("\"type\":\"refund.failed\"")));
    }

    @Test
    void balanceTransactionsArePagedByCreatedRangeAndByPayoutAndTheReportListsThem() throws Exception {
        Sandbox.freezeClock("2031-05-20T10:00:00Z");
        String a = unique("pay");
        String b = unique("pay");
        String d = unique("pay");
        String intentA = intent(a, a, 10000, "pm_card_visa").path("id");
        intent(b, b, 2500, "tok_mastercard").then().statusCode(200);
        intent(d, d, 1000, "pm_card_createDispute").then().statusCode(200);
        String ref = unique("ref");
        refund(ref, intentA, 4000L, ref).then().statusCode(200);
        long from = java.time.Instant.parse("2031-05-20T00:00:00Z").getEpochSecond();
        long to = from + 86_400;

        List<JsonNode> all = new ArrayList<>();
        String after = null;
        for (int page = 0; page < 10; page++) {
            RequestSpecification spec = stripe().queryParam("created[gte]", from)
                    .queryParam("created[lt]", to)
                    .queryParam("limit", 2)
                    .queryParam("expand[]", "data.source.payment_intent");
            if (after != null) {
                spec.queryParam("starting_after", after);
            }
            JsonNode list =
                    mapper.readTree(spec.get("/stripe/v1/balance_transactions").asString());
            list.get("data").forEach(all::add);
            after = all.get(all.size() - 1).get("id").asText();
            if (!list.get("has_more").asBoolean()) {
                break;
            }
        }
        assertEquals(5, all.size(), "3 charges, 1 refund, 1 dispute");
        JsonNode charge = find(all, "charge");
        assertEquals(10000, charge.get("amount").asLong());
        assertEquals(320, charge.get("fee").asLong(), "2.9 % + 30, as the settlement files");
        assertEquals(9680, charge.get("net").asLong());
        assertEquals(a, charge.at("/source/payment_intent/metadata/payment_id").asText());
        JsonNode refundTxn = find(all, "refund");
        assertEquals(-4000, refundTxn.get("amount").asLong());
        assertEquals(ref, refundTxn.at("/source/metadata/refund_id").asText());
        JsonNode dispute = find(all, "dispute");
        assertEquals(-1000, dispute.get("amount").asLong());
        assertEquals(1500, dispute.get("fee").asLong());
        assertEquals(d, dispute.at("/source/payment_intent/metadata/payment_id").asText());

        stripe().queryParam("payout", "po_sbx_20310520")
                .queryParam("limit", 100)
                .get("/stripe/v1/balance_transactions")
                .then()
                .statusCode(200)
                .body("data", hasSize(5));
        stripe().queryParam("payout", "po_sbx_20310521")
                .get("/stripe/v1/balance_transactions")
                .then()
                .body("data", hasSize(0));

        String csv = stripe().queryParam("payout", "po_sbx_20310520")
                .get("/stripe/reports/payout_reconciliation.itemized.csv")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        String[] lines = csv.split("\n");
        assertTrue(lines[0].startsWith("automatic_payout_id,balance_transaction_id,"), lines[0]);
        assertEquals(6, lines.length, csv);
        assertTrue(
                csv.lines().anyMatch(l -> l.contains(",100.00,3.20,96.80,charge,") && l.endsWith("," + a + ",")), csv);
        assertTrue(csv.lines().anyMatch(l -> l.contains(",-40.00,0.00,-40.00,refund,") && l.endsWith("," + ref)), csv);
        assertTrue(csv.lines().anyMatch(l -> l.contains(",-10.00,15.00,-25.00,dispute,")), csv);
    }

    /** Stripe's units per currency: what Stripe refuses is refused here, with Stripe's error shape. */
    @Test
    void amountsFollowStripesCurrencyRules() {
        Sandbox.freezeClock("2031-07-01T10:00:00Z");
        // ISK and UGX: two-decimal, whole units only
        Response fractional = inCurrency(unique("pay"), 12_345, "isk");
        fractional.then().statusCode(400).body("error.type", equalTo("invalid_request_error"));
        assertEquals("invalid_charge_amount_no_decimal_compatible", fractional.<String>path("error.code"));
        assertEquals("amount", fractional.<String>path("error.param"));
        inCurrency(unique("pay"), 12_350, "ugx").then().statusCode(400);
        // three-decimal currencies: the last digit is 0
        Response kwd = inCurrency(unique("pay"), 1_235, "kwd");
        kwd.then().statusCode(400).body("error.param", equalTo("amount"));
        // a currency Stripe does not take
        inCurrency(unique("pay"), 1_000, "irr").then().statusCode(400).body("error.param", equalTo("currency"));

        String isk = inCurrency(unique("pay"), 500_000, "isk")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
        String dinars = inCurrency(unique("pay"), 5_120, "kwd")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
        inCurrency(unique("pay"), 5_000, "jpy").then().statusCode(200);
        refund(unique("re"), dinars, 15L, unique("ref")).then().statusCode(400).body("error.param", equalTo("amount"));
        refund(unique("re"), isk, 250_050L, unique("ref")).then().statusCode(400);
        refund(unique("re"), dinars, 1_230L, unique("ref")).then().statusCode(200);

        String csv = stripe().queryParam("payout", "po_sbx_20310701")
                .get("/stripe/reports/payout_reconciliation.itemized.csv")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertTrue(csv.lines().anyMatch(l -> l.contains(",kwd,5.120,")), csv);
        assertTrue(csv.lines().anyMatch(l -> l.contains(",kwd,-1.230,")), csv);
        assertTrue(csv.lines().anyMatch(l -> l.contains(",jpy,5000,")), csv);
        assertTrue(csv.lines().anyMatch(l -> l.contains(",isk,5000.00,")), csv);
    }

    private static Response inCurrency(String paymentId, long amount, String currency) {
        return stripe().formParam("amount", amount)
                .formParam("currency", currency)
                .formParam("confirm", "true")
                .formParam("payment_method_types[]", "card")
                .formParam("payment_method", "pm_card_visa")
                .formParam("metadata[payment_id]", paymentId)
                .header("Idempotency-Key", paymentId)
                .post("/stripe/v1/payment_intents");
    }

    @Test
    void theSettlementDiscrepancyKnobsApplyToBalanceTransactionsToo() throws Exception {
        Sandbox.freezeClock("2031-06-01T10:00:00Z");
        List<String> payments = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String pay = unique("pay");
            intent(pay, pay, 1000 + i, "pm_card_visa").then().statusCode(200);
            payments.add(pay);
        }
        java.util.Map<String, Long> booked = new java.util.HashMap<>();
        for (JsonNode txn : payout("po_sbx_20310601")) {
            booked.put(txn.get("id").asText(), txn.get("amount").asLong());
        }
        assertEquals(4, booked.size());

        Sandbox.faults("{\"settlementDrop\":1,\"settlementAmountMismatch\":1,\"settlementPhantom\":1}");
        JsonNode listed = payout("po_sbx_20310601");
        assertEquals(4, listed.size(), "4 charges, one dropped, one phantom added");
        int phantoms = 0;
        int changed = 0;
        for (JsonNode txn : listed) {
            Long amount = booked.get(txn.get("id").asText());
            if (amount == null) {
                assertTrue(txn.get("source").asText().startsWith("ch_phantom_"), txn.toString());
                phantoms++;
            } else if (amount != txn.get("amount").asLong()) {
                changed++;
            }
        }
        assertEquals(1, phantoms);
        assertEquals(1, changed, listed.toString());
        assertEquals(listed, payout("po_sbx_20310601"), "the same list every time");

        // the test API lists what was injected, with our references, as it does for the settlement files
        JsonNode injected = mapper.readTree(io.restassured.RestAssured.get("/test/settlements/2031-06-01/discrepancies")
                        .asString())
                .get("injected");
        java.util.Map<String, JsonNode> byKind = new java.util.HashMap<>();
        injected.forEach(item -> byKind.put(item.get("kind").asText(), item));
        assertEquals(
                java.util.Set.of("DROPPED", "AMOUNT_CHANGED", "PHANTOM_CHARGE"), byKind.keySet(), injected.toString());
        assertTrue(payments.contains(byKind.get("DROPPED").get("reference").asText()), injected.toString());
        JsonNode changedItem = byKind.get("AMOUNT_CHANGED");
        assertTrue(payments.contains(changedItem.get("reference").asText()), injected.toString());
        assertTrue(changedItem.get("fileAmount").asLong()
                != changedItem.get("originalAmount").asLong());
    }

    private JsonNode payout(String payout) throws Exception {
        return mapper.readTree(stripe().queryParam("payout", payout)
                        .queryParam("limit", 100)
                        .get("/stripe/v1/balance_transactions")
                        .asString())
                .get("data");
    }

    private static JsonNode find(List<JsonNode> txns, String category) {
        return txns.stream()
                .filter(t -> t.get("reporting_category").asText().equals(category))
                .filter(t -> !category.equals("charge") || t.get("amount").asLong() == 10000)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void theRateLimitAndErrorKnobsAnswerLikeStripeAndA500IsKeptUnderItsKey() {
        Sandbox.faults("{\"rateLimitRate\":1.0}");
        String pay = unique("pay");
        intent(pay, pay, 100, "pm_card_visa")
                .then()
                .statusCode(429)
                .header("Stripe-Should-Retry", equalTo("true"))
                .body("error.code", equalTo("rate_limit"));
        Sandbox.faults("{\"rateLimitRate\":0.0,\"errorRate\":1.0}");
        intent(pay, pay, 100, "pm_card_visa").then().statusCode(500).body("error.type", equalTo("api_error"));
        Sandbox.faults("{\"errorRate\":0.0}");
        intent(pay, pay, 100, "pm_card_visa").then().statusCode(500).header("Idempotent-Replayed", equalTo("true"));
        assertEquals(0, counters(pay).chargeMovements());
    }

    @Test
    void eventsAreSignedOncePerSecretAndCarryTheObjects() throws Exception {
        String pay = unique("pay");
        String intentId = intent(pay, pay, 1200, "pm_card_createDispute").path("id");
        await().atMost(WAIT).until(() -> StripeWebhookReceiver.about(intentId).size() >= 2);
        List<StripeWebhookReceiver.Received> received = StripeWebhookReceiver.about(intentId);
        JsonNode succeeded = null;
        JsonNode dispute = null;
        for (StripeWebhookReceiver.Received r : received) {
            String[] parts = r.signature().split(",");
            assertTrue(parts[0].startsWith("t="), r.signature());
            assertEquals(3, parts.length, "t and one v1 per secret: " + r.signature());
            String t = parts[0].substring(2);
            assertTrue(matches(parts[1], t, r.body(), "whsec_stripe_current"));
            assertTrue(matches(parts[2], t, r.body(), "whsec_stripe_previous"));
            JsonNode event = mapper.readTree(r.body());
            assertEquals("event", event.get("object").asText());
            assertTrue(event.get("id").asText().startsWith("evt_"));
            switch (event.get("type").asText()) {
                case "payment_intent.succeeded" -> succeeded = event;
                case "charge.dispute.created" -> dispute = event;
                default -> {}
            }
        }
        assertEquals(pay, succeeded.at("/data/object/metadata/payment_id").asText());
        assertEquals("dispute", dispute.at("/data/object/object").asText());
        assertEquals(intentId, dispute.at("/data/object/payment_intent").asText());
        given().queryParam("reference", pay)
                .get("/test/webhooks")
                .then()
                .body("type", org.hamcrest.Matchers.hasItems("payment_intent.succeeded", "charge.dispute.created"));
    }

    private static boolean matches(String part, String t, byte[] body, String secret) throws Exception {
        if (!part.startsWith("v1=")) {
            return false;
        }
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.UTF_8));
        return MessageDigest.isEqual(mac.doFinal(body), HexFormat.of().parseHex(part.substring(3)));
    }

    @Test
    void aPaymentIntentsRefundsArePagedWithLimitAndStartingAfterAsStripeDoes() {
        String pay = unique("pay");
        String intentId = intent(pay, pay, 5000, "pm_card_visa").path("id");
        List<String> created = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String ref = unique("ref");
            created.add(
                    0,
                    refund(ref, intentId, 10L, ref)
                            .then()
                            .statusCode(200)
                            .extract()
                            .path("id"));
        }
        List<String> all = stripe().queryParam("payment_intent", intentId)
                .queryParam("limit", 100)
                .get("/stripe/v1/refunds")
                .then()
                .statusCode(200)
                .body("has_more", equalTo(false))
                .extract()
                .path("data.id");
        assertEquals(5, all.size());
        assertEquals(new java.util.HashSet<>(created), new java.util.HashSet<>(all));

        List<String> paged = new ArrayList<>();
        String after = null;
        boolean more = true;
        while (more) {
            RequestSpecification page =
                    stripe().queryParam("payment_intent", intentId).queryParam("limit", 2);
            if (after != null) {
                page.queryParam("starting_after", after);
            }
            Response answer = page.get("/stripe/v1/refunds");
            answer.then().statusCode(200);
            List<String> ids = answer.path("data.id");
            assertTrue(ids.size() <= 2 && !ids.isEmpty(), "a page of at most limit items: " + ids);
            paged.addAll(ids);
            after = ids.get(ids.size() - 1);
            more = answer.path("has_more");
            assertTrue(paged.size() <= 5, "pages move on: " + paged);
        }
        assertEquals(all, paged, "the pages, in order, are the whole list newest first");

        stripe().queryParam("payment_intent", intentId)
                .queryParam("starting_after", "re_unknown")
                .get("/stripe/v1/refunds")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("resource_missing"))
                .body("error.param", equalTo("starting_after"));
    }
}
