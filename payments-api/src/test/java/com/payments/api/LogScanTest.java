package com.payments.api;

import static com.payments.api.TestSupport.ADMIN;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Runs a varied session (captures succeeded, declined and refused, replays, key reuse, operator calls issuing and
 * revoking keys, card numbers in every field, header, path and query, unknown and revoked keys) with the
 * application's loggers at DEBUG, and scans everything logged: no API key, no operator token, no secret from the
 * configuration, no {@code source} token value, nothing that looks like a card number. The session includes PSP
 * webhooks: correctly signed (applied and duplicate), badly signed, stale, oversized, and one carrying a card number.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class LogScanTest {
    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @Test
    void aVariedRunLogsNoSecretTokenOrCardNumber() {
        TestSupport.warmUp(pspUrl, breakers);
        Logger app = Logger.getLogger("com.payments");
        Level previous = app.getLevel();
        List<String> secrets = new ArrayList<>(List.of(KEY_A, KEY_B, ADMIN, "whsec_sandbox_secret"));
        for (String name : ConfigProvider.getConfig().getPropertyNames()) {
            String lower = name.toLowerCase();
            if (lower.contains("secret") || lower.contains("token") || lower.contains("password")) {
                ConfigProvider.getConfig().getOptionalValue(name, String.class).ifPresent(secrets::add);
            }
        }
        List<String> sources = new ArrayList<>(List.of("tok_visa", "tok_mastercard", "tok_chargeDeclined"));
        List<String> cards =
                List.of("4242424242424242", "4000 0566 5566 5556", "5555-5555-5555-4444", "378282246310005");
        Random random = new Random(42);
        int requests = 0;
        app.setLevel(Level.FINE);
        try (LogCapture logs = new LogCapture()) {
            // Captures: succeeded, declined, replayed, reused with another body, and a PSP-refused token.
            for (String source : List.of("tok_visa", "tok_mastercard", "tok_chargeDeclined", "tok_unknownToken123")) {
                String key = TestSupport.unique("logs");
                String body = TestSupport.body(TestSupport.unique("order"), 1000 + random.nextInt(1000), "EUR", source);
                Response first = TestSupport.capture(KEY_A, key, body);
                assertThat(first.statusCode()).isLessThan(500);
                TestSupport.capture(KEY_A, key, body);
                TestSupport.capture(KEY_A, key, body.replace("EUR", "USD"));
                String id = first.path("id");
                if (id != null) {
                    TestSupport.merchant(KEY_A).get("/v1/payments/" + id);
                    TestSupport.merchant(KEY_B).get("/v1/payments/" + id);
                }
                requests += 5;
            }
            sources.add("tok_unknownToken123");
            // Card numbers everywhere a client could put one.
            for (String card : cards) {
                String enc = card.replace(" ", "%20");
                TestSupport.capture(KEY_A, TestSupport.unique("logs"), TestSupport.body("o", 100, "EUR", card));
                TestSupport.capture(
                        KEY_A, TestSupport.unique("logs"), TestSupport.body(card + "\u00e9", 100, "EUR", "tok_visa"));
                TestSupport.capture(
                        KEY_A,
                        TestSupport.unique("logs"),
                        "{\"orderId\":\"o\",\"amount\":100,\"currency\":\"EUR\",\"source\":\"tok_visa\",\"card\":\""
                                + card + "\"}");
                TestSupport.capture(KEY_A, TestSupport.unique("logs"), "{\"source\":\"" + card + "\",");
                TestSupport.capture(
                        KEY_A,
                        TestSupport.unique("logs"),
                        TestSupport.body("o", 100, card.substring(0, 3), "tok_visa"));
                TestSupport.capture(KEY_A, card + "\u00e9", TestSupport.body("o", 100, "EUR", "tok_visa"));
                TestSupport.merchant(KEY_A).urlEncodingEnabled(false).get("/v1/payments/" + enc);
                TestSupport.merchant(KEY_A).urlEncodingEnabled(false).get("/v1/refunds/" + enc);
                TestSupport.merchant(KEY_A).urlEncodingEnabled(false).get("/v1/payments?orderId=" + enc);
                given().header("Authorization", "Bearer " + card).get("/v1/payments/" + enc);
                given().header("Authorization", "Bearer " + ADMIN)
                        .urlEncodingEnabled(false)
                        .post("/v1/admin/merchants/" + enc + "/keys");
                given().header("Authorization", "Bearer " + ADMIN)
                        .contentType(ContentType.JSON)
                        .body("{\"name\":" + card.replace(" ", "") + "}")
                        .post("/v1/admin/merchants");
                requests += 12;
            }
            // Operator: a merchant, its key used, rotated away, the old key refused; wrong tokens.
            Response created = given().header("Authorization", "Bearer " + ADMIN)
                    .contentType(ContentType.JSON)
                    .body("{\"name\":\"log scan\"}")
                    .post("/v1/admin/merchants");
            String merchant = created.path("merchantId");
            String oldKey = created.path("apiKey");
            secrets.add(oldKey);
            TestSupport.capture(oldKey, TestSupport.unique("logs"), TestSupport.body("o-c", 100, "EUR", "tok_visa"));
            Response rotated = given().header("Authorization", "Bearer " + ADMIN)
                    .post("/v1/admin/merchants/" + merchant + "/keys?revokeOthers=true");
            secrets.add(rotated.path("apiKey"));
            TestSupport.merchant(rotated.path("apiKey")).get("/v1/payments?orderId=o-c");
            given().header("Authorization", "Bearer " + KEY_A).post("/v1/admin/merchants/" + merchant + "/keys");
            given().header("Authorization", "Bearer sk_live_never_logged_key").get("/v1/payments/x");
            secrets.add("sk_live_never_logged_key");
            requests += 6;
            // PSP webhooks about a payment we do not know: signed (stored, then a duplicate), wrongly signed, stale,
            // oversized, and one with a card number and a source token in its data.
            String secret = "whsec_sandbox_secret";
            long now = java.time.Instant.now().getEpochSecond();
            String event = "{\"id\":\"evt_" + java.util.UUID.randomUUID() + "\",\"type\":\"charge.succeeded\",\"data\":"
                    + "{\"id\":\"ch_logs\",\"reference\":\"" + java.util.UUID.randomUUID()
                    + "\",\"status\":\"succeeded\","
                    + "\"amount\":100,\"currency\":\"EUR\",\"source\":\"tok_visa\",\"card\":\"" + cards.get(0) + "\"}}";
            String big = event.substring(0, event.length() - 2) + ",\"pad\":\"" + "a".repeat(40_000) + "\"}}";
            List<String[]> deliveries = List.of(
                    new String[] {event, PspWebhooks.sign(secret, now, bytes(event))},
                    new String[] {event, PspWebhooks.sign(secret, now, bytes(event))},
                    new String[] {event, PspWebhooks.sign("whsec_wrong", now, bytes(event))},
                    new String[] {event, PspWebhooks.sign(secret, now - 3600, bytes(event))},
                    new String[] {event, "t=" + now + ",v1=" + KEY_A},
                    new String[] {big, PspWebhooks.sign(secret, now, bytes(big))});
            for (String[] d : deliveries) {
                int status = given().contentType("application/json")
                        .header(PspWebhooks.SANDBOX_HEADER, d[1])
                        .body(bytes(d[0]))
                        .post("/v1/psp/webhooks")
                        .statusCode();
                assertThat(status).isLessThan(500);
                requests++;
            }
            // Malformed bodies quoting a source token and a key.
            TestSupport.capture(
                    KEY_A,
                    TestSupport.unique("logs"),
                    "{\"source\":\"tok_visa\",\"amount\":1e3,\"x\":\"" + KEY_B + "\"}");
            requests++;

            assertThat(requests).isGreaterThan(60);
            String canary = "log scan canary " + requests;
            org.jboss.logging.Logger.getLogger(LogScanTest.class).infof("log scan canary %d", requests);
            assertThat(logs.lines())
                    .as("the capture sees JBoss logging, formatted")
                    .anyMatch(l -> l.contains(canary));
            assertThat(logs.linesContaining(secrets))
                    .as("keys, tokens or secrets in the log")
                    .isEmpty();
            assertThat(logs.linesContaining(sources))
                    .as("source tokens in the log")
                    .isEmpty();
            assertThat(logs.linesWithCardNumbers())
                    .as("card numbers in the log")
                    .isEmpty();
        } finally {
            app.setLevel(previous);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
