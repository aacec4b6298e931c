package com.payments.api.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;

import com.payments.api.PspWebhooks;
import com.payments.infra.ManagementPortTestResource.Management;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * payments-api as it is shipped: the packaged jar ({@code ./mvnw verify}) or the native executable ({@code -Dnative}),
 * in its own process with the prod profile, against a real PostgreSQL and a real psp-sandbox process. Each test
 * talks HTTP only and checks the database with plain JDBC (as the schema owner; the service logs in as the
 * application role); the merchant comes from the operator API on the management port, as in production.
 */
@QuarkusIntegrationTest
@TestProfile(IntegrationProfile.class)
class PaymentsApiIT {
    Postgres.Database database;
    PspSandbox sandbox;
    Management management;

    private String apiKey;

    @BeforeEach
    void merchantFromTheOperatorApi() {
        Response created = operator()
                .contentType(ContentType.JSON)
                .body("{\"name\":\"IT Shop\",\"rateLimitPerSecond\":1000}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        apiKey = created.path("apiKey");
        assertThat(apiKey).startsWith("sk_live_");
    }

    @Test
    void captureReplayAndKeyMismatch() throws SQLException {
        String key = unique("key");
        String body = payment(unique("order"), 2500, "tok_visa");
        Response first = capture(key, body);
        first.then().statusCode(201).header("Idempotent-Replayed", (String) null);
        String id = first.path("id");
        assertThat(first.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(first.<String>path("pspReference")).startsWith("ch_");

        Response replay = capture(key, body);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.asByteArray()).isEqualTo(first.asByteArray());
        given().baseUri(sandbox.url())
                .get("/test/counters/" + id)
                .then()
                .statusCode(200)
                .body("chargeRequests", equalTo(1))
                .body("chargeMovements", equalTo(1));

        capture(key, payment(unique("order"), 9999, "tok_visa"))
                .then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("code", equalTo("idempotency_key_reused"));

        assertThat(count("SELECT count(*) FROM payments WHERE id = ?::uuid", id))
                .isEqualTo(1);
        assertThat(count(
                        "SELECT count(*) FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id"
                                + " WHERE t.kind = 'CAPTURE' AND t.reference = ?",
                        id))
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM outbox WHERE key = ? AND event_type = 'PaymentCaptured'", id))
                .isEqualTo(1);
    }

    @Test
    void declineIs402WithTheDeclineCode() throws SQLException {
        Response declined = capture(unique("key"), payment(unique("order"), 1200, "tok_chargeDeclined"));
        declined.then().statusCode(402).body("status", equalTo("FAILED")).body("declineCode", equalTo("card_declined"));
        String id = declined.path("id");
        assertThat(count("SELECT count(*) FROM payments WHERE id = ?::uuid AND status = 'FAILED'", id))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM ledger_transactions WHERE reference = ?", id))
                .isZero();
    }

    @Test
    void refundReservationNeverExceedsTheCapture() throws SQLException {
        String id = capture(unique("key"), payment(unique("order"), 3000, "tok_visa"))
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        Response refund = refund(id, unique("refund"), 1000);
        refund.then().statusCode(202).body("status", equalTo("PENDING"));
        refund(id, unique("refund"), 2001)
                .then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("code", equalTo("refund_exceeds_refundable"));
        given().header("Authorization", "Bearer " + apiKey)
                .get("/v1/payments/" + id)
                .then()
                .statusCode(200)
                .body("refundableAmount", equalTo(2000));
        assertThat(count("SELECT count(*) FROM refunds WHERE payment_id = ?::uuid AND status = 'PENDING'", id))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox WHERE key = ? AND topic = 'refund-commands'", id))
                .isEqualTo(1);
    }

    @Test
    void signedWebhookSettlesAnUnknownPaymentAndABadSignatureIsRefused() throws SQLException {
        // The sandbox records the charge and answers only after 15 s, past our 6 s timeout: the answer is lost.
        Response unknown = capture(unique("key"), payment(unique("order"), 2100, "tok_timeoutCaptured"));
        unknown.then().statusCode(202).body("status", equalTo("UNKNOWN"));
        String id = unknown.path("id");
        String event = "{\"id\":\"evt_" + UUID.randomUUID() + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":"
                + "\"ch_it_" + UUID.randomUUID().toString().replace("-", "") + "\",\"reference\":\"" + id
                + "\",\"status\":\"succeeded\",\"amount\":2100,\"currency\":\"EUR\","
                + "\"created\":\"2026-01-01T00:00:00.000Z\"}}";
        byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();

        webhook(bytes, PspWebhooks.sign("whsec_wrong", now, bytes))
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("invalid_webhook_signature"));
        assertThat(count("SELECT count(*) FROM psp_webhook_events WHERE payload -> 'data' ->> 'reference' = ?", id))
                .isZero();

        webhook(bytes, PspWebhooks.sign(IntegrationProfile.WEBHOOK_SECRET, now, bytes))
                .then()
                .statusCode(200);
        given().header("Authorization", "Bearer " + apiKey)
                .get("/v1/payments/" + id)
                .then()
                .statusCode(200)
                .body("status", equalTo("CAPTURED"));
        assertThat(count(
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = ?::uuid AND actor = 'webhook'",
                        id))
                .isEqualTo(1);
    }

    @Test
    void badInputIsProblemJsonAndStoresNothing() throws SQLException {
        long payments = count("SELECT count(*) FROM payments");
        capture(unique("key"), "{\"orderId\":\"o\",\"amount\":-5,\"currency\":\"EUR\",\"source\":\"tok_visa\"}")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("status", equalTo(400))
                .body("code", equalTo("invalid_amount"));
        capture(unique("key"), "{not json")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("invalid_json"));
        given().header("Authorization", "Bearer sk_live_unknown_key_0000000000000000")
                .get("/v1/payments/" + UUID.randomUUID())
                .then()
                .statusCode(401)
                .contentType("application/problem+json");
        given().header("Authorization", "Bearer " + apiKey)
                .get("/v1/payments/" + UUID.randomUUID())
                .then()
                .statusCode(404)
                .contentType("application/problem+json");
        assertThat(count("SELECT count(*) FROM payments")).isEqualTo(payments);
    }

    @Test
    void operatorApiIssuesKeysAndListsOperationsOnlyWithTheToken() {
        String merchantId = operator()
                .contentType(ContentType.JSON)
                .body("{\"name\":\"Rotating Shop\"}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(201)
                .extract()
                .path("merchantId");
        Response rotated = operator().post("/v1/admin/merchants/" + merchantId + "/keys?revokeOthers=true");
        rotated.then().statusCode(201).body("revokedKeys", equalTo(1));
        given().header("Authorization", "Bearer " + (String) rotated.path("apiKey"))
                .get("/v1/payments/" + UUID.randomUUID())
                .then()
                .statusCode(404);

        operator()
                .get("/v1/admin/operations?status=OPEN&limit=10")
                .then()
                .statusCode(200)
                .contentType(ContentType.JSON);
        given().baseUri(management.url())
                .header("Authorization", "Bearer not-the-token")
                .get("/v1/admin/operations")
                .then()
                .statusCode(401)
                .contentType("application/problem+json");
        // never on the merchant port, whatever the token
        given().header("Authorization", "Bearer " + IntegrationProfile.ADMIN_TOKEN)
                .get("/v1/admin/operations")
                .then()
                .statusCode(404);
    }

    @Test
    void healthAndMetrics() {
        capture(unique("key"), payment(unique("order"), 100, "tok_visa")).then().statusCode(201);
        given().baseUri(management.url())
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> given().baseUri(management.url())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .body(matchesPattern("(?s).*payments_captures_total\\{[^}]*outcome=\"captured\".*"))
                .body(containsString("payments_psp_latency_seconds_bucket")));
    }

    /**
     * Swagger UI is in the jar but off in the prod profile ({@code %prod.quarkus.swagger-ui.enabled=false}): 404 on
     * both ports, while the OpenAPI document stays on the management port (so the 404 is not a port that serves
     * nothing).
     */
    @Test
    void swaggerUiIsOffInProd() {
        given().baseUri(management.url()).get("/q/openapi").then().statusCode(200);
        for (String path : new String[] {"/q/swagger-ui", "/q/swagger-ui/", "/q/swagger-ui/index.html"}) {
            given().baseUri(management.url()).get(path).then().statusCode(404);
            given().get(path).then().statusCode(404);
        }
    }

    private RequestSpecification operator() {
        return given().baseUri(management.url()).header("Authorization", "Bearer " + IntegrationProfile.ADMIN_TOKEN);
    }

    private Response capture(String idempotencyKey, String body) {
        return given().header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", idempotencyKey)
                .contentType(ContentType.JSON)
                .body(body)
                .post("/v1/payments");
    }

    private Response refund(String paymentId, String idempotencyKey, long amount) {
        return given().header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", idempotencyKey)
                .contentType(ContentType.JSON)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + paymentId + "/refunds");
    }

    private static Response webhook(byte[] body, String signature) {
        return given().contentType(ContentType.JSON)
                .header(PspWebhooks.SANDBOX_HEADER, signature)
                .body(body)
                .post("/v1/psp/webhooks");
    }

    private static String payment(String orderId, long amount, String source) {
        return "{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"source\":\"" + source
                + "\"}";
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private long count(String sql, String... args) throws SQLException {
        try (Connection connection =
                        DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setString(i + 1, args[i]);
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
