package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.KafkaTestResource;
import com.payments.infra.Postgres;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.infra.QuarkusProcess;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The services' normal work as the application role {@code payments_app} (migration V79), as in production: this API,
 * the packaged outbox-relay and refunds-worker log in as payments_app on a database the owner migrated. A capture, its
 * replay, a refund executed by the worker through the relay and Kafka, and the operator API creating a merchant all
 * succeed with the role's grants.
 */
@QuarkusTest
@TestProfile(ApplicationRoleEndToEndTest.AsApplicationRole.class)
class ApplicationRoleEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<QuarkusProcess> PROCESSES = new ArrayList<>();

    public static class AsApplicationRole implements QuarkusTestProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(
                    new TestResourceEntry(PostgresTestResource.class, Map.of("login", "app", "prefix", "approle")),
                    new TestResourceEntry(KafkaTestResource.class),
                    new TestResourceEntry(PspSandboxTestResource.class, Map.of("psp.timeout-delay", "8s")));
        }

        @Override
        public boolean disableGlobalTestResources() {
            return true;
        }
    }

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @ConfigProperty(name = "kafka.bootstrap.servers")
    String bootstrap;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String reactiveUrl;

    @ConfigProperty(name = "quarkus.datasource.username")
    String user;

    @ConfigProperty(name = "quarkus.datasource.password")
    String password;

    @AfterAll
    static void stopRelayAndWorker() {
        PROCESSES.forEach(QuarkusProcess::stop);
        PROCESSES.clear();
    }

    @Test
    void loggedInAsTheApplicationRole() {
        assertThat(user).isEqualTo(Postgres.APP_ROLE);
        assertThat(pool.query("SELECT current_user")
                        .execute()
                        .await()
                        .indefinitely()
                        .iterator()
                        .next()
                        .getString(0))
                .isEqualTo(Postgres.APP_ROLE);
    }

    @Test
    void captureReplayAndRefundSucceedWithTheRolesGrants() {
        startRelayAndWorker();
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

        assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paymentId))
                .isEqualTo(2_500);
        assertThat(count(
                        pool,
                        """
                        SELECT count(*) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE (t.kind, t.reference) IN (('CAPTURE', $1), ('REFUND', $2))""",
                        paymentId.toString(),
                        refundId.toString()))
                .isEqualTo(4);
        // The relay (as payments_app) marked every event of the payment published, the refund's outcome included.
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> count(
                                pool,
                                "SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) FROM outbox WHERE key = $1",
                                paymentId.toString())
                        >= 3);
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1 AND sent_at IS NULL", paymentId.toString()))
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

    private void startRelayAndWorker() {
        TestSupport.warmUp(pspUrl, breakers);
        synchronized (PROCESSES) {
            if (!PROCESSES.isEmpty()) {
                return;
            }
            // The start deleted every topic; the broker may still be deleting them (TopicExistsException): retry.
            await().atMost(OUTCOME).ignoreExceptions().until(() -> {
                try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
                    Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                    admin.createTopics(Stream.of("refund-commands", "payment-events", "refund-commands-dlq")
                                    .filter(t -> !existing.contains(t))
                                    .map(t -> new NewTopic(t, 4, (short) 1))
                                    .toList())
                            .all()
                            .get(30, TimeUnit.SECONDS);
                    return true;
                }
            });
            Map<String, String> common = Map.of(
                    "quarkus.datasource.reactive.url", reactiveUrl,
                    "quarkus.datasource.username", user,
                    "quarkus.datasource.password", password,
                    "kafka.bootstrap.servers", bootstrap,
                    "quarkus.log.level", "WARN");
            PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", common));
            Map<String, String> worker = new HashMap<>(common);
            worker.put("psp.url", pspUrl);
            PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
        }
    }
}
