package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The 30 s tokens; the test profile sets psp.timeout-delay=1s, the client gives up after 200 ms. */
@QuarkusTest
class TimeoutTokenTest {

    @TestHTTPResource("/v1/charges")
    URL charges;

    final HttpClient client = HttpClient.newHttpClient();

    @AfterEach
    void reset() {
        Sandbox.resetFaultsAndClock();
    }

    private HttpResponse<String> post(String key, String body, Duration timeout) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(charges.toString()))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void timeoutCapturedChargesButTheAnswerIsLost() throws Exception {
        String ref = unique("pay");
        String body = Sandbox.chargeBody(ref, 900, "tok_timeoutCaptured");
        assertThrows(HttpTimeoutException.class, () -> post(ref, body, Duration.ofMillis(200)));
        // the PSP has the charge although the client never saw the answer
        given().queryParam("reference", ref)
                .get("/v1/charges")
                .then()
                .statusCode(200)
                .body("status", equalTo("succeeded"));
        // the same key again: the first result, at once
        HttpResponse<String> retry = post(ref, body, Duration.ofMillis(500));
        assertEquals(200, retry.statusCode());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        Counters c = counters(ref);
        assertEquals(2, c.chargeRequests());
        assertEquals(1, c.chargeMovements());
    }

    @Test
    void timeoutCapturedAnswersAfterTheConfiguredDelay() throws Exception {
        String ref = unique("pay");
        HttpResponse<String> late =
                post(ref, Sandbox.chargeBody(ref, 900, "tok_timeoutCaptured"), Duration.ofSeconds(20));
        assertEquals(200, late.statusCode());
        assertEquals(1, counters(ref).chargeMovements());
    }

    @Test
    void timeoutNotReceivedRecordsNothingUntilTheSameKeyComesAgain() throws Exception {
        String ref = unique("pay");
        String body = Sandbox.chargeBody(ref, 900, "tok_timeoutNotReceived");
        assertThrows(HttpTimeoutException.class, () -> post(ref, body, Duration.ofMillis(200)));
        given().queryParam("reference", ref).get("/v1/charges").then().statusCode(404);
        assertEquals(0, counters(ref).chargeMovements());

        HttpResponse<String> retry = post(ref, body, Duration.ofMillis(500));
        assertEquals(200, retry.statusCode());
        given().queryParam("reference", ref)
                .get("/v1/charges")
                .then()
                .statusCode(200)
                .body("status", equalTo("succeeded"));
        Counters c = counters(ref);
        assertEquals(2, c.chargeRequests());
        assertEquals(1, c.chargeMovements());
    }

    @Test
    void timeoutNotReceivedAnswers504AfterTheConfiguredDelay() throws Exception {
        String ref = unique("pay");
        HttpResponse<String> late =
                post(ref, Sandbox.chargeBody(ref, 900, "tok_timeoutNotReceived"), Duration.ofSeconds(20));
        assertEquals(504, late.statusCode());
        assertEquals(0, counters(ref).chargeMovements());
    }

    @Test
    void timeoutRateKnobDelaysTheAnswerOfARecordedCharge() throws Exception {
        Sandbox.faults("{\"timeoutRate\":1.0}");
        String ref = unique("pay");
        String body = Sandbox.chargeBody(ref, 900, "tok_visa");
        assertThrows(HttpTimeoutException.class, () -> post(ref, body, Duration.ofMillis(200)));
        assertEquals(1, counters(ref).chargeMovements());
    }

    @Test
    void notReceivedRateKnobRecordsNothing() throws Exception {
        Sandbox.faults("{\"notReceivedRate\":1.0}");
        String ref = unique("pay");
        String body = Sandbox.chargeBody(ref, 900, "tok_visa");
        assertThrows(HttpTimeoutException.class, () -> post(ref, body, Duration.ofMillis(200)));
        assertEquals(0, counters(ref).chargeMovements());
        given().queryParam("reference", ref).get("/v1/charges").then().statusCode(404);
    }
}
