package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.count;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The services' normal work as the application role {@code payments_app} (migration V79), as in production: the
 * packaged payments-api, outbox-relay, refunds-worker and webhook-delivery log in as payments_app on a database the
 * owner migrated. A capture, its replay, a refund executed by the worker through the relay and Kafka, the operator API
 * creating a merchant, and a webhook sent to that merchant's endpoint all succeed with the role's grants.
 */
class ApplicationRoleEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<AutoCloseable> PROCESSES = new ArrayList<>();
    /** The database as its services log in to it: as the application role. */
    private static Postgres.Database app;

    @BeforeAll
    static void startServices() {
        app = Postgres.freshDatabase("approle").asApp();
        Stack.recreateTopics();
        PspSandbox psp = PspSandbox.start(Map.of("psp.timeout-delay", "8s"));
        PROCESSES.add(psp);
        QuarkusProcess api = Stack.paymentsApi(app, psp.url(), Map.of());
        PROCESSES.add(api);
        Merchant.use(api);
        Map<String, String> common = new HashMap<>(Stack.datasource(app));
        common.put("kafka.bootstrap.servers", Kafka.bootstrapServers());
        common.put("quarkus.log.level", "WARN");
        PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", common));
        Map<String, String> worker = new HashMap<>(common);
        worker.put("psp.url", psp.url());
        PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
        PROCESSES.add(Stack.webhookDelivery(app, Kafka.bootstrapServers(), Map.of()));
        Merchant.warmUp(psp.url());
    }

    @AfterAll
    static void stopServices() throws Exception {
        Stack.stopAll(PROCESSES);
    }

    @Test
    void loggedInAsTheApplicationRole() throws Exception {
        assertThat(app.user()).isEqualTo(Postgres.APP_ROLE);
        try (Connection sql = DriverManager.getConnection(app.jdbcUrl(), app.user(), app.password());
                ResultSet user = sql.createStatement().executeQuery("SELECT current_user")) {
            user.next();
            assertThat(user.getString(1)).isEqualTo(Postgres.APP_ROLE);
        }
        // and so do the services (their pools are open after the warm-up): every session on the database is the
        // application role's, this test's and theirs
        String sessions = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND usename ";
        assertThat(count(app, sessions + "<> ?", Postgres.APP_ROLE)).isZero();
        assertThat(count(app, sessions + "= ?", Postgres.APP_ROLE)).isGreaterThan(1);
    }

    @Test
    void captureReplayAndRefundSucceedWithTheRolesGrants() {
        String key = unique("key");
        String order = unique("order");
        Response first = capture(KEY_A, key, body(order, 10_000, "EUR", "tok_visa"));
        first.then().statusCode(201);
        UUID paymentId = UUID.fromString(first.path("id"));
        capture(KEY_A, key, body(order, 10_000, "EUR", "tok_visa"))
                .then()
                .statusCode(201)
                .header("Idempotent-Replayed", "true");

        Response refund = merchant(KEY_A)
                .header("Idempotency-Key", unique("r"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":2500}")
                .post("/v1/payments/" + paymentId + "/refunds");
        refund.then().statusCode(202);
        UUID refundId = UUID.fromString(refund.path("refundId"));
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(KEY_A).get("/v1/refunds/" + refundId).path("status"), "SUCCEEDED"::equals);

        assertThat(count(app, "SELECT refunded_amount FROM payments WHERE id = ?", paymentId))
                .isEqualTo(2_500);
        assertThat(count(
                        app,
                        """
                        SELECT count(*) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE (t.kind, t.reference) IN (('CAPTURE', ?), ('REFUND', ?))""",
                        paymentId.toString(),
                        refundId.toString()))
                .isEqualTo(4);
        // The relay (as payments_app) marked every event of the payment published, the refund's outcome included.
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> count(
                                app,
                                "SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) FROM outbox WHERE key = ?",
                                paymentId.toString())
                        >= 3);
        assertThat(count(app, "SELECT count(*) FROM outbox WHERE key = ? AND sent_at IS NULL", paymentId.toString()))
                .isZero();
    }

    @Test
    void operatorApiCreatesAMerchantWhoseKeyWorks() {
        Response created = given().header("Authorization", "Bearer test-operator-token")
                .contentType(ContentType.JSON)
                .body("{\"name\":\"" + unique("shop") + "\"}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        String apiKey = created.path("apiKey");
        capture(apiKey, unique("key"), body(unique("order"), 1_000, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
    }

    @Test
    void webhookOfACaptureIsDeliveredWithTheRolesGrants() {
        Response created = given().header("Authorization", "Bearer test-operator-token")
                .contentType(ContentType.JSON)
                .body("{\"name\":\"" + unique("shop") + "\"}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        String apiKey = created.path("apiKey");
        try (WebhookReceiver receiver = WebhookReceiver.start()) {
            Response endpoint = merchant(apiKey)
                    .contentType(ContentType.JSON)
                    .body("{\"url\":\"" + receiver.url() + "\",\"events\":[\"PaymentCaptured\"]}")
                    .post("/v1/webhook_endpoints");
            endpoint.then().statusCode(201);
            receiver.secret(endpoint.path("secret"));
            Response payment = capture(apiKey, unique("key"), body(unique("order"), 1_000, "EUR", "tok_visa"));
            payment.then().statusCode(201);
            String paymentId = payment.path("id");

            // webhook-delivery (as payments_app) read the event's deliveries, sent it and recorded the outcome
            String deliveries = "/v1/webhook_endpoints/" + endpoint.path("id") + "/deliveries";
            await().atMost(OUTCOME)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> merchant(apiKey).get(deliveries).path("data.status"), List.of("SUCCEEDED")::equals);
            assertThat(receiver.received()).singleElement().satisfies(request -> {
                assertThat(request.signatureValid()).isTrue();
                assertThat(request.bodyText()).contains(paymentId);
            });
        }
    }
}
