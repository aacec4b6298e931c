package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@QuarkusTest
class ChargeTest {

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    @ParameterizedTest
    @CsvSource({
        "tok_visa, succeeded, , 1",
        "tok_mastercard, succeeded, , 1",
        "tok_refundFails, succeeded, , 1",
        "tok_chargeDeclined, declined, card_declined, 0",
        "tok_insufficientFunds, declined, insufficient_funds, 0"
    })
    void testSourcesChargeOrDecline(String source, String status, String declineCode, int movements) {
        String ref = unique("pay");
        charge(ref, 1234, source)
                .then()
                .statusCode(200)
                .contentType(ContentType.JSON)
                .body("id", startsWith("ch_"))
                .body("reference", equalTo(ref))
                .body("status", equalTo(status))
                .body("declineCode", declineCode == null ? nullValue() : equalTo(declineCode))
                .body("amount", equalTo(1234))
                .body("currency", equalTo("EUR"));
        given().queryParam("reference", ref)
                .get("/v1/charges")
                .then()
                .statusCode(200)
                .body("status", equalTo(status));
        Counters c = counters(ref);
        assertEquals(1, c.chargeRequests());
        assertEquals(movements, c.chargeMovements());
    }

    @Test
    void replayReturnsTheFirstResultByteForByte() {
        String ref = unique("pay");
        Response first = charge(ref, 500, "tok_visa");
        first.then().statusCode(200);
        Response second = charge(ref, 500, "tok_visa");
        second.then().statusCode(200).header("Idempotent-Replayed", "true");
        assertEquals(first.asString(), second.asString());
        Counters c = counters(ref);
        assertEquals(2, c.chargeRequests());
        assertEquals(1, c.chargeMovements());
    }

    @Test
    void declineIsReplayedToo() {
        String ref = unique("pay");
        String first = charge(ref, 500, "tok_chargeDeclined").asString();
        assertEquals(first, charge(ref, 500, "tok_chargeDeclined").asString());
    }

    @Test
    void sameKeyDifferentBodyIsRefused() {
        String ref = unique("pay");
        charge(ref, 500, "tok_visa").then().statusCode(200);
        charge(ref, ref, 501, "tok_visa").then().statusCode(422).body("error.code", equalTo("idempotency_key_reused"));
        charge(ref, ref, 500, "tok_mastercard").then().statusCode(422);
        charge(ref, unique("other-ref"), 500, "tok_visa").then().statusCode(422);
        assertEquals(1, counters(ref).chargeMovements());
    }

    @Test
    void differentKeysForOneReferenceChargeTwiceAndTheCountersShowIt() {
        String ref = unique("pay");
        charge(unique("k"), ref, 500, "tok_visa").then().statusCode(200);
        charge(unique("k"), ref, 500, "tok_visa").then().statusCode(200);
        assertEquals(2, counters(ref).chargeMovements());
    }

    @Test
    void lookupOfAnUnknownReferenceIs404() {
        given().queryParam("reference", unique("never"))
                .get("/v1/charges")
                .then()
                .statusCode(404)
                .body("error.code", equalTo("charge_not_found"));
        given().queryParam("reference", unique("never"))
                .get("/v1/refunds")
                .then()
                .statusCode(404);
    }

    @Test
    void badRequestsAreRefusedAndRecordNothing() {
        String ref = unique("pay");
        given().contentType(ContentType.JSON)
                .body(Sandbox.chargeBody(ref, 100, "tok_visa"))
                .post("/v1/charges")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("invalid_idempotency_key"));
        charge(ref, 0, "tok_visa").then().statusCode(400).body("error.code", equalTo("invalid_amount"));
        charge(ref, 100, "tok_unknown").then().statusCode(400).body("error.code", equalTo("unknown_source"));
        charge(ref, 100, "4242 4242 4242 4242")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("card_data_rejected"));
        given().contentType(ContentType.JSON)
                .header("Idempotency-Key", ref)
                .body("{\"reference\":\"" + ref + "\",\"amount\":100,\"currency\":\"eur\",\"source\":\"tok_visa\"}")
                .post("/v1/charges")
                .then()
                .statusCode(400)
                .body("error.code", equalTo("invalid_currency"));
        assertEquals(new Counters(ref, 0, 0, 0, 0, 0, 0, 0, 0), counters(ref));
        // the key was not consumed by the bad requests
        charge(ref, 100, "tok_visa").then().statusCode(200).header("Idempotent-Replayed", nullValue());
    }

    @Test
    void errorRateAnswers500AndRecordsNothing() {
        String ref = unique("pay");
        Sandbox.faults("{\"errorRate\":1.0}");
        charge(ref, 100, "tok_visa").then().statusCode(500).body("error.code", equalTo("internal_error"));
        given().queryParam("reference", ref).get("/v1/charges").then().statusCode(500);
        Sandbox.faults("{\"errorRate\":0.0}");
        given().queryParam("reference", ref).get("/v1/charges").then().statusCode(404);
        Counters c = counters(ref);
        assertEquals(1, c.chargeRequests());
        assertEquals(0, c.chargeMovements());
        charge(ref, 100, "tok_visa").then().statusCode(200).body("status", equalTo("succeeded"));
        assertEquals(1, counters(ref).chargeMovements());
    }

    @Test
    void openApiDocumentsBothChargeCalls() {
        given().accept("application/json")
                .get("/q/openapi")
                .then()
                .statusCode(200)
                .body("paths.'/v1/charges'.post.parameters[0].name", equalTo("Idempotency-Key"))
                .body("paths.'/v1/charges'.post.responses.'200'.description", startsWith("The charge"))
                .body("paths.'/v1/charges'.get", notNullValue());
    }

    @Test
    void latencyKnobStillAnswers() {
        Sandbox.faults("{\"latencyFixedMs\":20,\"latencySpreadMs\":20}");
        String ref = unique("pay");
        charge(ref, 100, "tok_visa").then().statusCode(200);
        given().get("/test/faults").then().body("latencyFixedMs", equalTo(20));
    }
}
