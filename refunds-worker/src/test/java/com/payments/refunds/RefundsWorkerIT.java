package com.payments.refunds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import com.payments.contracts.events.RefundRequested;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.ManagementPortTestResource;
import com.payments.infra.ManagementPortTestResource.Management;
import com.payments.infra.Postgres;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandbox;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The packaged worker (jar, or the native executable with {@code -Dnative}) in its own process with the prod profile:
 * a refund command on Kafka becomes one refund at a real sandbox, the refund SUCCEEDED with its ledger transaction and
 * RefundSucceeded event. Surviving kill -9 is {@link RefundWorkerKillIT}, which runs the same artifact.
 */
@QuarkusIntegrationTest
@TestProfile(RefundsWorkerIT.Profile.class)
class RefundsWorkerIT {
    public static class Profile implements QuarkusTestProfile {
        /** Plain-text logs: the launcher reads the random HTTP port from the start line, which JSON would wrap. */
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.log.console.json.enabled", "false");
        }

        /** Only these start: with disableGlobalTestResources, a profile's own resources are the suite's. */
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(
                    new TestResourceEntry(PostgresTestResource.class, Map.of("login", "app")),
                    new TestResourceEntry(ManagementPortTestResource.class),
                    new TestResourceEntry(KafkaTestResource.class),
                    new TestResourceEntry(PspSandboxTestResource.class));
        }

        @Override
        public boolean disableGlobalTestResources() {
            return true;
        }
    }

    Postgres.Database database;
    Management management;
    PspSandbox sandbox;

    @Test
    void consumesARefundCommandAndRefundsAtTheSandboxOnce() throws Exception {
        try (Connection sql = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password())) {
            UUID merchant = RefundWorkerKillIT.merchant(sql);
            UUID payment = UUID.randomUUID();
            String charge = RefundWorkerKillIT.charge(sandbox.url(), payment);
            UUID refund = RefundWorkerKillIT.captureAndReserve(sql, merchant, payment, charge);
            RefundWorkerKillIT.publish(
                    List.of(RefundRequested.of(refund, payment, merchant, 1_000, "EUR", charge, Map.of())));

            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> RefundWorkerKillIT.scalar(
                                    sql,
                                    "SELECT count(*) FROM refunds WHERE status = 'SUCCEEDED' AND id = '" + refund + "'")
                            == 1);
            assertThat(RefundWorkerKillIT.pspMovements(sandbox.url(), refund)).isEqualTo(1);
            assertThat(RefundWorkerKillIT.scalar(
                            sql,
                            "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = '" + refund
                                    + "'"))
                    .isEqualTo(1);
            assertThat(RefundWorkerKillIT.scalar(
                            sql, "SELECT count(*) FROM outbox WHERE event_type = 'RefundSucceeded'"))
                    .isEqualTo(1);
        }
        given().baseUri(management.url())
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"));
    }
}
