package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.Postgres;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * During a database failover the endpoint first cuts every session, then may lead to a server that refuses writes
 * (a standby not yet promoted, the old primary): a merchant gets 503 + Retry-After (retry with the same key), never
 * a 500, nothing is stored, and the same key captures once the database takes writes again (scripts/fault-failover.sh
 * runs the real failover).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class DatabaseUnavailableTest {

    @Inject
    Pool pool;

    /** The test database, as its owner (PostgresTestResource). */
    Postgres.Database database;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @AfterEach
    void writable() {
        readOnly(false);
    }

    @Test
    void aCaptureWhileTheDatabaseRefusesWritesGets503WithNothingStoredAndItsKeyWorksAfterwards() {
        String key = unique("ro-key");
        String orderId = unique("ro-order");
        String body = body(orderId, 1_234, "EUR", "tok_visa");
        readOnly(true);

        Response refused = TestSupport.capture(KEY_A, key, body);

        refused.then().statusCode(503).contentType("application/problem+json").header("Retry-After", "1");
        assertThat(refused.<String>path("code")).isEqualTo("database_unavailable");
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key))
                .isZero();

        readOnly(false);
        Response captured = retriedWhileUnavailable(key, body);
        captured.then().statusCode(201);
        UUID id = UUID.fromString(captured.path("id"));
        assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                .isEqualTo(1);
    }

    /**
     * What a merchant does with a 503 database_unavailable: the same request again, with the same key. A pooled session
     * the endpoint cut may still be handed out once (its reset reaches the pool a moment later).
     */
    private static Response retriedWhileUnavailable(String key, String body) {
        Response answer = TestSupport.capture(KEY_A, key, body);
        for (int retry = 0; retry < 5 && answer.statusCode() == 503; retry++) {
            assertThat(answer.<String>path("code")).isEqualTo("database_unavailable");
            answer = TestSupport.capture(KEY_A, key, body);
        }
        return answer;
    }

    /**
     * New sessions of the test database refuse writes (as on a hot standby: SQLSTATE 25006) or take them again; every
     * other session is ended (as the endpoint cuts them), so that the pool's next requests open new ones. Over a
     * connection of its own, outside the pool.
     */
    private void readOnly(boolean on) {
        try (Connection connection =
                        DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                Statement statement = connection.createStatement()) {
            statement.execute("SET default_transaction_read_only = off"); // this session opened while it was on
            statement.execute("ALTER DATABASE \"" + database.name() + "\" SET default_transaction_read_only = "
                    + (on ? "on" : "off"));
            // pg_terminate_backend(pid, timeout) waits until each session has ended
            statement.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname ="
                    + " current_database() AND pid <> pg_backend_pid()");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
