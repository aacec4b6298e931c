package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.charge;
import static com.payments.sandbox.Sandbox.refund;
import static com.payments.sandbox.Sandbox.unique;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithTestResource(value = WebhookReceiver.class, scope = TestResourceScope.GLOBAL)
class WebhookTest {

    static final Duration WAIT = Duration.ofSeconds(15);
    final ObjectMapper mapper = new ObjectMapper();

    @ConfigProperty(name = "psp.webhook.secret")
    String secret;

    @AfterEach
    void reset() {
        WebhookReceiver.failNext.set(0);
        Sandbox.resetFaultsAndClock();
    }

    /**
     * The receiver's check, written from the documented algorithm: {@code Psp-Signature: t=<unix
     * seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>}, timestamp within 5 minutes.
     */
    static boolean verify(String header, byte[] body, String secret) throws Exception {
        String t = null;
        String v1 = null;
        for (String part : header.split(",")) {
            if (part.startsWith("t=")) {
                t = part.substring(2);
            } else if (part.startsWith("v1=")) {
                v1 = part.substring(3);
            }
        }
        if (t == null || v1 == null) {
            return false;
        }
        if (Math.abs(System.currentTimeMillis() / 1000 - Long.parseLong(t)) > 300) {
            return false;
        }
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.UTF_8));
        byte[] expected = mac.doFinal(body);
        return MessageDigest.isEqual(expected, HexFormat.of().parseHex(v1));
    }

    private List<WebhookReceiver.Received> awaitReceived(String reference, int count) {
        await().atMost(WAIT).until(() -> WebhookReceiver.about(reference).size() >= count);
        return WebhookReceiver.about(reference);
    }

    @Test
    void chargeEventIsSignedWithTheDocumentedAlgorithm() throws Exception {
        String ref = unique("pay");
        String chargeId = charge(ref, 1500, "tok_visa").path("id");
        WebhookReceiver.Received received = awaitReceived(ref, 1).get(0);

        assertTrue(verify(received.signature(), received.body(), secret));
        JsonNode event = mapper.readTree(received.body());
        assertTrue(event.get("id").asText().startsWith("evt_"));
        assertEquals("charge.succeeded", event.get("type").asText());
        assertEquals(chargeId, event.at("/data/id").asText());
        assertEquals(ref, event.at("/data/reference").asText());
        assertEquals(1500, event.at("/data/amount").asLong());

        byte[] tampered =
                received.text().replace("\"amount\":1500", "\"amount\":1").getBytes(StandardCharsets.UTF_8);
        assertFalse(verify(received.signature(), tampered, secret), "a tampered body fails");
        assertFalse(verify(received.signature(), received.body(), "whsec_wrong"), "a wrong secret fails");
        long t = Long.parseLong(received.signature().replaceFirst("^t=(\\d+),.*$", "$1"));
        String otherTime = received.signature().replaceFirst("^t=\\d+", "t=" + (t - 7));
        assertFalse(verify(otherTime, received.body(), secret), "another timestamp fails");
    }

    @Test
    void everyOutcomeHasItsEventType() throws Exception {
        String declined = unique("pay");
        charge(declined, 100, "tok_chargeDeclined");
        assertEquals("charge.failed", type(awaitReceived(declined, 1).get(0)));

        String chargeId = charge(unique("pay"), 100, "tok_refundFails").path("id");
        String failedRefund = unique("ref");
        refund(failedRefund, chargeId, 50);
        assertEquals("refund.failed", type(awaitReceived(failedRefund, 1).get(0)));

        String okCharge = charge(unique("pay"), 100, "tok_visa").path("id");
        String okRefund = unique("ref");
        refund(okRefund, okCharge, 50);
        assertEquals("refund.succeeded", type(awaitReceived(okRefund, 1).get(0)));
    }

    private String type(WebhookReceiver.Received received) throws Exception {
        return mapper.readTree(received.body()).get("type").asText();
    }

    @Test
    void retriesWithTheSameEventWhileTheReceiverFails() throws Exception {
        WebhookReceiver.failNext.set(3);
        String ref = unique("pay");
        charge(ref, 100, "tok_visa");
        List<WebhookReceiver.Received> received = awaitReceived(ref, 4);
        assertEquals(
                List.of(500, 500, 500, 200),
                received.stream().map(WebhookReceiver.Received::answeredWith).toList());
        String eventId = mapper.readTree(received.get(0).body()).get("id").asText();
        for (WebhookReceiver.Received r : received) {
            assertEquals(eventId, mapper.readTree(r.body()).get("id").asText());
            assertTrue(verify(r.signature(), r.body(), secret));
        }
        await().atMost(WAIT).untilAsserted(() -> given().queryParam("reference", ref)
                .get("/test/webhooks")
                .then()
                .body("[0].status", org.hamcrest.Matchers.equalTo("DELIVERED"))
                .body("[0].attempts", org.hamcrest.Matchers.equalTo(4)));
    }

    @Test
    void duplicateKnobDeliversTheSameEventTwice() throws Exception {
        Sandbox.faults("{\"webhookDuplicateRate\":1.0}");
        String ref = unique("pay");
        charge(ref, 100, "tok_visa");
        List<WebhookReceiver.Received> received = awaitReceived(ref, 2);
        assertEquals(
                mapper.readTree(received.get(0).body()).get("id"),
                mapper.readTree(received.get(1).body()).get("id"));
    }

    @Test
    void dropKnobSendsNothingAndReorderKnobLetsLaterEventsOvertake() {
        Sandbox.faults("{\"webhookDropRate\":1.0}");
        String dropped = unique("pay");
        charge(dropped, 100, "tok_visa");
        given().queryParam("reference", dropped)
                .get("/test/webhooks")
                .then()
                .body("[0].status", org.hamcrest.Matchers.equalTo("DROPPED"));

        Sandbox.faults("{\"webhookDropRate\":0.0,\"webhookReorderRate\":1.0}");
        String held = unique("pay");
        charge(held, 100, "tok_visa");
        Sandbox.faults("{\"webhookReorderRate\":0.0}");
        String overtaking = unique("pay");
        charge(overtaking, 100, "tok_visa");

        awaitReceived(held, 1);
        List<String> order = WebhookReceiver.RECEIVED.stream()
                .map(WebhookReceiver.Received::text)
                .filter(t -> t.contains(held) || t.contains(overtaking))
                .map(t -> t.contains(held) ? "held" : "overtaking")
                .toList();
        assertEquals(List.of("overtaking", "held"), order);
        assertTrue(WebhookReceiver.about(dropped).isEmpty(), "the dropped event never arrived");
    }
}
