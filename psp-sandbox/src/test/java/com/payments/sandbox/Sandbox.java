package com.payments.sandbox;

import static io.restassured.RestAssured.given;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.util.UUID;

/** Calls of the sandbox's API for tests. */
final class Sandbox {

    private Sandbox() {}

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static String chargeBody(String reference, long amount, String source) {
        return "{\"reference\":\"" + reference + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"source\":\""
                + source + "\"}";
    }

    static Response charge(String key, String reference, long amount, String source) {
        return given().contentType(ContentType.JSON)
                .header("Idempotency-Key", key)
                .body(chargeBody(reference, amount, source))
                .post("/v1/charges");
    }

    /** A charge with key = reference, the way payments-api calls it. */
    static Response charge(String reference, long amount, String source) {
        return charge(reference, reference, amount, source);
    }

    /** An authorization with key = reference, the way the adapter sends it. */
    static Response authorize(String reference, long amount, String source) {
        return given().contentType(ContentType.JSON)
                .header("Idempotency-Key", reference)
                .body(chargeBody(reference, amount, source))
                .post("/v1/authorizations");
    }

    static Response capture(String key, String chargeId, long amount) {
        return given().contentType(ContentType.JSON)
                .header("Idempotency-Key", key)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/charges/{id}/capture", chargeId);
    }

    static Response voidAuthorization(String key, String chargeId) {
        return given().header("Idempotency-Key", key).post("/v1/charges/{id}/void", chargeId);
    }

    static Response refund(String key, String reference, String chargeId, long amount) {
        return given().contentType(ContentType.JSON)
                .header("Idempotency-Key", key)
                .body("{\"reference\":\"" + reference + "\",\"charge\":\"" + chargeId + "\",\"amount\":" + amount + "}")
                .post("/v1/refunds");
    }

    static Response refund(String reference, String chargeId, long amount) {
        return refund(reference, reference, chargeId, amount);
    }

    static Counters counters(String reference) {
        return given().get("/test/counters/{r}", reference)
                .then()
                .statusCode(200)
                .extract()
                .as(Counters.class);
    }

    static void faults(String json) {
        given().contentType(ContentType.JSON)
                .body(json)
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    static void resetFaultsAndClock() {
        given().delete("/test/faults").then().statusCode(200);
        given().delete("/test/clock").then().statusCode(200);
    }

    static void freezeClock(String instant) {
        given().contentType(ContentType.JSON)
                .body("{\"instant\":\"" + instant + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
    }
}
