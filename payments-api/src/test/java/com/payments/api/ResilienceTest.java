package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.client.PspGateway;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import jakarta.ws.rs.ProcessingException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@QuarkusTestResource(PostgresTestResource.class)
@QuarkusTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"))
class ResilienceTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @AfterEach
    void resetFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        breakers.resetAll();
    }

    @Test
    void openCircuitIs503NotStoredAndTheSameKeySucceedsOnceThePspIsBack() {
        TestSupport.psp(pspUrl)
                .contentType("application/json")
                .body("{\"errorRate\":1.0}")
                .put("/test/faults")
                .then()
                .statusCode(200);
        // PSP 5xx answers: outcome unknown (202) until the breaker opens
        Response open = null;
        for (int i = 0; i < 10 && open == null; i++) {
            Response r = capture(KEY_A, unique("key"), body(unique("order"), 100, "EUR", "tok_visa"));
            assertThat(r.statusCode()).isIn(202, 503);
            if (r.statusCode() == 503) {
                open = r;
            }
        }
        assertThat(open).as("circuit opened").isNotNull();

        String key = unique("key");
        String orderId = unique("order");
        String json = body(orderId, 2000, "EUR", "tok_visa");
        Response rejected = capture(KEY_A, key, json);
        rejected.then().statusCode(503).contentType("application/problem+json").header("Retry-After", "1");
        assertThat(rejected.<String>path("code")).isEqualTo("psp_unavailable");
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                .isZero();

        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        AtomicReference<Response> last = new AtomicReference<>();
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> {
                    Response r = capture(KEY_A, key, json);
                    assertThat(r.statusCode()).isIn(201, 503);
                    last.set(r);
                    return r.statusCode() == 201;
                });
        UUID id = UUID.fromString(last.get().path("id"));
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                .isEqualTo(1);
        assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                .isEqualTo(1);
    }

    @Test
    void onlyFailuresThatProveNothingWasSentReleaseTheKey() {
        assertThat(PspGateway.neverSent(new ProcessingException(new ConnectException("refused"))))
                .isTrue();
        assertThat(PspGateway.neverSent(new TimeoutException())).isFalse();
        assertThat(PspGateway.neverSent(new ProcessingException(new java.io.IOException("Connection reset"))))
                .isFalse();
    }
}
