package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.refund;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class RefundTest {

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    private static String chargeId(String source, long amount) {
        return charge(unique("pay"), amount, source)
                .then()
                .statusCode(200)
                .extract()
                .path("id");
    }

    @Test
    void refundSucceedsAndIsFoundByReference() {
        String charge = chargeId("tok_visa", 1000);
        String ref = unique("ref");
        refund(ref, charge, 400)
                .then()
                .statusCode(200)
                .body("id", startsWith("re_"))
                .body("reference", equalTo(ref))
                .body("status", equalTo("succeeded"))
                .body("charge", equalTo(charge))
                .body("amount", equalTo(400));
        given().queryParam("reference", ref)
                .get("/v1/refunds")
                .then()
                .statusCode(200)
                .body("status", equalTo("succeeded"));
        Counters c = counters(ref);
        assertEquals(1, c.refundRequests());
        assertEquals(1, c.refundMovements());
    }

    @Test
    void refundsCannotExceedTheCharge() {
        String charge = chargeId("tok_visa", 1000);
        refund(unique("ref"), charge, 600).then().statusCode(200).body("status", equalTo("succeeded"));
        String tooMuch = unique("ref");
        refund(tooMuch, charge, 401).then().statusCode(422).body("error.code", equalTo("amount_exceeds_refundable"));
        assertEquals(0, counters(tooMuch).refundMovements());
        given().queryParam("reference", tooMuch).get("/v1/refunds").then().statusCode(404);
        refund(unique("ref"), charge, 400).then().statusCode(200).body("status", equalTo("succeeded"));
        refund(unique("ref"), charge, 1).then().statusCode(422);
    }

    @Test
    void refundReplayAndMismatch() {
        String charge = chargeId("tok_visa", 1000);
        String ref = unique("ref");
        Response first = refund(ref, charge, 300);
        first.then().statusCode(200);
        Response replay = refund(ref, charge, 300);
        replay.then().statusCode(200).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), replay.asString());
        refund(ref, charge, 301).then().statusCode(422).body("error.code", equalTo("idempotency_key_reused"));
        Counters c = counters(ref);
        assertEquals(3, c.refundRequests());
        assertEquals(1, c.refundMovements());
        // the replays did not use up the charge: 700 are left
        refund(unique("ref"), charge, 700).then().statusCode(200).body("status", equalTo("succeeded"));
    }

    @Test
    void tokRefundFailsChargesButItsRefundsFail() {
        String charge = chargeId("tok_refundFails", 1000);
        String ref = unique("ref");
        refund(ref, charge, 100).then().statusCode(200).body("status", equalTo("failed"));
        given().queryParam("reference", ref)
                .get("/v1/refunds")
                .then()
                .statusCode(200)
                .body("status", equalTo("failed"));
        assertEquals(0, counters(ref).refundMovements());
    }

    @Test
    void declinedChargeIsNotRefundableAndUnknownChargeIs404() {
        String declined = chargeId("tok_chargeDeclined", 1000);
        refund(unique("ref"), declined, 100)
                .then()
                .statusCode(422)
                .body("error.code", equalTo("charge_not_refundable"));
        refund(unique("ref"), "ch_doesnotexist", 100)
                .then()
                .statusCode(404)
                .body("error.code", equalTo("charge_not_found"));
    }

    @Test
    void requestLogShowsWhenEachRefundArrivedAndWasAnswered() throws Exception {
        Sandbox.faults("{\"latencyFixedMs\":300}");
        String charge = chargeId("tok_visa", 1000);
        List<String> refs = List.of(unique("ref"), unique("ref"), unique("ref"));
        ExecutorService pool = Executors.newFixedThreadPool(refs.size());
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (String ref : refs) {
                answers.add(pool.submit(() -> refund(ref, charge, 100).statusCode()));
            }
            for (Future<Integer> answer : answers) {
                assertEquals(200, answer.get(10, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        List<Map<String, Object>> entries = new ArrayList<>();
        for (String ref : refs) {
            List<Map<String, Object>> logged = given().queryParam("reference", ref)
                    .get("/test/refund-requests")
                    .then()
                    .statusCode(200)
                    .extract()
                    .path("requests");
            assertEquals(1, logged.size(), ref);
            assertEquals(200, logged.get(0).get("status"));
            entries.add(logged.get(0));
        }
        // All three were in flight together: each arrived before any was answered, 300 ms later.
        for (Map<String, Object> a : entries) {
            Instant answered = Instant.parse((String) a.get("answeredAt"));
            assertTrue(Duration.between(Instant.parse((String) a.get("receivedAt")), answered)
                            .compareTo(Duration.ofMillis(300))
                    >= 0);
            for (Map<String, Object> b : entries) {
                assertTrue(Instant.parse((String) b.get("receivedAt")).isBefore(answered));
            }
        }
        int maxInFlight = given().get("/test/refund-requests").then().extract().path("maxInFlight");
        assertTrue(maxInFlight >= 3, "maxInFlight " + maxInFlight);
    }
}
