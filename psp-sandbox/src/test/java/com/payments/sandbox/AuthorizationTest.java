package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.authorize;
import static com.payments.sandbox.Sandbox.capture;
import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.freezeClock;
import static com.payments.sandbox.Sandbox.refund;
import static com.payments.sandbox.Sandbox.unique;
import static com.payments.sandbox.Sandbox.voidAuthorization;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Authorizations, their capture (full or partial) or void, and expiry on the sandbox clock (docs/psp-sandbox.md). */
@QuarkusTest
class AuthorizationTest {

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    private static String lookupStatus(String reference) {
        return given().queryParam("reference", reference)
                .get("/v1/charges")
                .then()
                .statusCode(200)
                .extract()
                .path("status");
    }

    @Test
    void authorizationHoldsAndPartialCaptureTakesOnlyTheCapturedAmount() {
        freezeClock("2032-04-01T10:00:00Z");
        String ref = unique("auth");
        String id = authorize(ref, 1_000, "tok_visa")
                .then()
                .statusCode(200)
                .body("id", startsWith("ch_"))
                .body("status", equalTo("authorized"))
                .body("amount", equalTo(1000))
                .body("captureMethod", equalTo("manual"))
                .body("capturedAmount", equalTo(0))
                .body("expiresAt", equalTo("2032-04-08T10:00:00Z"))
                .extract()
                .path("id");
        assertEquals("authorized", lookupStatus(ref));
        Counters held = counters(ref);
        assertEquals(1, held.chargeRequests());
        assertEquals(0, held.chargeMovements(), "an authorization takes no money");
        assertFalse(settlementOf("2032-04-01").contains(ref), "an authorization is no settlement line");
        // a refund of what is only authorized is refused
        refund(unique("ref"), id, 100).then().statusCode(422).body("error.code", equalTo("charge_not_refundable"));

        String key = "capture-" + ref;
        Response first = capture(key, id, 600);
        first.then()
                .statusCode(200)
                .body("status", equalTo("succeeded"))
                .body("amount", equalTo(1000))
                .body("capturedAmount", equalTo(600));
        Response again = capture(key, id, 600);
        again.then().statusCode(200).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), again.asString());
        given().queryParam("reference", ref).get("/v1/charges").then().body("capturedAmount", equalTo(600));

        Counters captured = counters(ref);
        assertEquals(2, captured.captureRequests());
        assertEquals(1, captured.chargeMovements());
        assertEquals(600, captured.capturedAmount());
        assertTrue(settlementOf("2032-04-01").contains("," + ref + ",600,"), "the capture settles the captured 600");
        // refunds apply to the captured amount only
        refund(unique("ref"), id, 601).then().statusCode(422).body("error.code", equalTo("amount_exceeds_refundable"));
        refund(unique("ref"), id, 600).then().statusCode(200).body("status", equalTo("succeeded"));
    }

    @Test
    void captureAboveTheAuthorizedAmountIsRefusedAndChangesNothing() {
        String ref = unique("auth");
        String id = authorize(ref, 1_000, "tok_visa").path("id");
        capture(unique("k"), id, 1_001).then().statusCode(422).body("error.code", equalTo("amount_exceeds_authorized"));
        assertEquals("authorized", lookupStatus(ref));
        capture(unique("k"), id, 1_000).then().statusCode(200).body("capturedAmount", equalTo(1000));
        // one capture per authorization, whatever the key
        capture(unique("k"), id, 1_000).then().statusCode(422).body("error.code", equalTo("charge_already_captured"));
        voidAuthorization(unique("k"), id)
                .then()
                .statusCode(422)
                .body("error.code", equalTo("charge_already_captured"));
        assertEquals(1_000, counters(ref).capturedAmount());
        assertEquals(0, counters(ref).voidMovements());
    }

    @Test
    void voidReleasesAndNothingCanBeCapturedAfter() {
        String ref = unique("auth");
        String id = authorize(ref, 800, "tok_mastercard").path("id");
        voidAuthorization("void-" + ref, id)
                .then()
                .statusCode(200)
                .body("status", equalTo("canceled"))
                .body("cancellationReason", equalTo("voided"));
        voidAuthorization("void-" + ref, id).then().statusCode(200).header("Idempotent-Replayed", "true");
        voidAuthorization(unique("k"), id).then().statusCode(200).body("status", equalTo("canceled"));
        capture(unique("k"), id, 800).then().statusCode(422).body("error.code", equalTo("authorization_canceled"));
        assertEquals("canceled", lookupStatus(ref));
        Counters c = counters(ref);
        assertEquals(1, c.voidMovements());
        assertEquals(0, c.chargeMovements());
        assertEquals(0, c.capturedAmount());
    }

    @Test
    void declinesAndWrongTargetsAreRefused() {
        String declined = unique("auth");
        String id = authorize(declined, 500, "tok_chargeDeclined")
                .then()
                .statusCode(200)
                .body("status", equalTo("declined"))
                .body("declineCode", equalTo("card_declined"))
                .extract()
                .path("id");
        capture(unique("k"), id, 500).then().statusCode(422).body("error.code", equalTo("charge_not_authorized"));
        String plain = unique("pay");
        String chargeId = charge(plain, 500, "tok_visa").path("id");
        capture(unique("k"), chargeId, 500).then().statusCode(422).body("error.code", equalTo("charge_not_authorized"));
        voidAuthorization(unique("k"), chargeId)
                .then()
                .statusCode(422)
                .body("error.code", equalTo("charge_not_authorized"));
        capture(unique("k"), "ch_missing", 500).then().statusCode(404).body("error.code", equalTo("charge_not_found"));
        capture(unique("k"), chargeId, 0).then().statusCode(400).body("error.code", equalTo("invalid_amount"));
        // one key cannot be both a charge and an authorization
        authorize(plain, 500, "tok_visa").then().statusCode(422).body("error.code", equalTo("idempotency_key_reused"));
        assertEquals(1, counters(plain).chargeMovements());
    }

    @Test
    void authorizationExpiresOnTheSandboxClock() {
        freezeClock("2032-05-01T09:00:00Z");
        String expiring = unique("auth");
        String lookedUp = unique("auth");
        String inTime = unique("auth");
        String a = authorize(expiring, 300, "tok_visa").path("id");
        authorize(lookedUp, 300, "tok_visa").then().statusCode(200);
        String c = authorize(inTime, 300, "tok_visa").path("id");
        freezeClock("2032-05-08T08:59:59.999Z");
        capture(unique("k"), c, 300).then().statusCode(200);
        freezeClock("2032-05-08T09:00:00Z");
        capture(unique("k"), a, 300).then().statusCode(422).body("error.code", equalTo("authorization_expired"));
        given().queryParam("reference", lookedUp)
                .get("/v1/charges")
                .then()
                .statusCode(200)
                .body("status", equalTo("canceled"))
                .body("cancellationReason", equalTo("expired"));
        voidAuthorization(unique("k"), a)
                .then()
                .statusCode(200)
                .body("status", equalTo("canceled"))
                .body("cancellationReason", equalTo("expired"));
        assertEquals(0, counters(expiring).capturedAmount());
        assertEquals(0, counters(expiring).voidMovements(), "an expiry is not a void");
        assertEquals(300, counters(inTime).capturedAmount());
    }

    @Test
    void concurrentCapturesAndVoidsWithDifferentKeys_exactlyOneWins() throws Exception {
        for (int round = 0; round < 5; round++) {
            String ref = unique("race");
            String id = authorize(ref, 10_000, "tok_visa").path("id");
            int threads = 16;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Response>> captures = new ArrayList<>();
            List<Future<Response>> voids = new ArrayList<>();
            try {
                for (int i = 0; i < threads; i++) {
                    long amount = 5_000 + i;
                    boolean capture = i % 2 == 0;
                    Future<Response> f = pool.submit(() -> {
                        start.await();
                        return capture ? capture(unique("k"), id, amount) : voidAuthorization(unique("k"), id);
                    });
                    (capture ? captures : voids).add(f);
                }
                start.countDown();
                int capturesWon = 0;
                long capturedAnswer = 0;
                for (Future<Response> f : captures) {
                    Response r = f.get(30, TimeUnit.SECONDS);
                    if (r.statusCode() == 200) {
                        capturesWon++;
                        capturedAnswer = r.jsonPath().getLong("capturedAmount");
                    } else {
                        assertEquals(422, r.statusCode(), r.asString());
                    }
                }
                int voidsAnswered200 = 0;
                for (Future<Response> f : voids) {
                    Response r = f.get(30, TimeUnit.SECONDS);
                    if (r.statusCode() == 200) {
                        voidsAnswered200++;
                    } else {
                        assertEquals("charge_already_captured", r.jsonPath().getString("error.code"));
                    }
                }
                Counters c = counters(ref);
                assertEquals(1, c.chargeMovements() + c.voidMovements(), "exactly one capture or void moved: " + c);
                if (c.chargeMovements() == 1) {
                    assertEquals(1, capturesWon);
                    assertEquals(0, voidsAnswered200);
                    assertEquals(capturedAnswer, c.capturedAmount());
                    assertEquals("succeeded", lookupStatus(ref));
                } else {
                    assertEquals(0, capturesWon);
                    assertEquals(0, c.capturedAmount());
                    assertEquals("canceled", lookupStatus(ref));
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void captureTimeoutTokenRecordsTheCaptureButHoldsTheFirstAnswerBack() {
        String ref = unique("auth");
        String id = authorize(ref, 700, "tok_captureTimeout").path("id");
        long start = System.nanoTime();
        capture("capture-" + ref, id, 700).then().statusCode(200);
        long firstMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(firstMs >= 900, "the first answer is held back by psp.timeout-delay (1 s in tests): " + firstMs);
        assertEquals("succeeded", lookupStatus(ref));
        start = System.nanoTime();
        capture("capture-" + ref, id, 700).then().statusCode(200).header("Idempotent-Replayed", "true");
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 900, "a replay answers at once");
        assertEquals(700, counters(ref).capturedAmount());
    }

    private static String settlementOf(String day) {
        return given().get("/v1/settlements/{d}.csv", day)
                .then()
                .statusCode(200)
                .extract()
                .asString();
    }
}
