package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.refund;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
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
}
