package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A truly saturated instance (every PSP permit taken and a waiting capture's deadline passed) sheds the
 * capture with 503 + Retry-After and stores nothing: no payment, the key released, so the same key succeeds later. A
 * manual capture likewise: the payment stays AUTHORIZED.
 */
@QuarkusTest
@TestProfile(SaturationShedTest.TinyPspLimit.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class SaturationShedTest {
    static final int PERMITS = 2;
    static final int CAPTURES = 8;

    public static class TinyPspLimit implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "payments.psp.limit.initial", Integer.toString(PERMITS),
                    "payments.psp.limit.min", Integer.toString(PERMITS),
                    "payments.psp.limit.max", Integer.toString(PERMITS),
                    "payments.psp.limit.max-wait", "300ms");
        }
    }

    @Inject
    Pool pool;

    @Inject
    MeterRegistry registry;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @AfterEach
    void resetFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
    }

    @Test
    void capturesBeyondThePermitsAndTheirDeadlineAreShedWithNothingStoredAndTheirKeysWorkLater() throws Exception {
        slowPsp();
        double shedBefore = shed("psp_limit");
        double openedBefore = circuitOpenings();
        List<String> keys = new ArrayList<>();
        List<String> bodies = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            keys.add(unique("sat-key"));
            bodies.add(body(unique("sat-order"), 500 + i, "EUR", "tok_visa"));
            requests.add(TestSupport.merchantPost("/v1/payments", KEY_A, keys.get(i), bodies.get(i)));
        }

        List<HttpResponse<String>> responses = TestSupport.concurrently(requests);

        List<Integer> shedIndexes = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            HttpResponse<String> response = responses.get(i);
            assertThat(response.statusCode()).as(response.body()).isIn(201, 503);
            String orderId = new JsonObject(bodies.get(i)).getString("orderId");
            if (response.statusCode() == 503) {
                shedIndexes.add(i);
                assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
                assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(new JsonObject(response.body()).getString("code")).isEqualTo("psp_unavailable");
                assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                        .isZero();
                assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", keys.get(i)))
                        .isZero();
            } else {
                assertThat(count(
                                pool,
                                "SELECT count(*) FROM payments WHERE order_id = $1 AND status = 'CAPTURED'",
                                orderId))
                        .isEqualTo(1);
            }
        }
        // the permits' holders got through; every other capture waited past its deadline
        assertThat(shedIndexes).hasSize(CAPTURES - PERMITS);
        assertThat(shed("psp_limit") - shedBefore).isEqualTo(CAPTURES - PERMITS);
        // Shedding is no PSP failure: the old @Bulkhead sat inside the circuit breaker, so its rejections opened the
        // circuit (6 of 8 here, over the test profile's 3 of 4) and every capture failed for the breaker's delay.
        assertThat(circuitOpenings()).isEqualTo(openedBefore);

        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        for (int i : shedIndexes) {
            Response retried = TestSupport.capture(KEY_A, keys.get(i), bodies.get(i));
            retried.then().statusCode(201);
            UUID id = UUID.fromString(retried.path("id"));
            assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                    .isEqualTo(1);
        }
    }

    /**
     * A manual capture is shed as a charge is (the same answer to a call never sent): 503, the payment AUTHORIZED again,
     * the key released, counted in {@code payments_shed_total{reason="psp_limit"}}; the same key captures later.
     */
    @Test
    void manualCapturesBeyondThePermitsAreShedAsChargesAreAndTheirKeysWorkLater() throws Exception {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            String manual = "{\"orderId\":\"" + unique("sat-manual") + "\",\"amount\":" + (700 + i)
                    + ",\"currency\":\"EUR\",\"source\":\"tok_visa\",\"captureMethod\":\"manual\"}";
            Response authorized = TestSupport.capture(KEY_A, unique("sat-auth"), manual);
            authorized.then().statusCode(201);
            ids.add(UUID.fromString(authorized.path("id")));
        }
        slowPsp();
        double shedBefore = shed("psp_limit");
        List<String> keys = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        for (UUID id : ids) {
            keys.add(unique("sat-capture"));
            requests.add(TestSupport.merchantPost(
                    "/v1/payments/" + id + "/capture", KEY_A, keys.get(keys.size() - 1), "{}"));
        }

        List<HttpResponse<String>> responses = TestSupport.concurrently(requests);

        List<Integer> shedIndexes = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            HttpResponse<String> response = responses.get(i);
            assertThat(response.statusCode()).as(response.body()).isIn(200, 503);
            if (response.statusCode() == 503) {
                shedIndexes.add(i);
                assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(new JsonObject(response.body()).getString("code")).isEqualTo("psp_unavailable");
                assertThat(TestSupport.paymentStatus(pool, ids.get(i))).isEqualTo("AUTHORIZED");
                assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", keys.get(i)))
                        .isZero();
            } else {
                assertThat(TestSupport.paymentStatus(pool, ids.get(i))).isEqualTo("CAPTURED");
            }
        }
        assertThat(shedIndexes).hasSize(CAPTURES - PERMITS);
        assertThat(shed("psp_limit") - shedBefore).isEqualTo(CAPTURES - PERMITS);

        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        for (int i : shedIndexes) {
            HttpResponse<String> retried = TestSupport.concurrently(List.of(TestSupport.merchantPost(
                            "/v1/payments/" + ids.get(i) + "/capture", KEY_A, keys.get(i), "{}")))
                    .get(0);
            assertThat(retried.statusCode()).as(retried.body()).isEqualTo(200);
            assertThat(TestSupport.paymentStatus(pool, ids.get(i))).isEqualTo("CAPTURED");
        }
    }

    /** Every PSP call takes far longer than a waiting capture's deadline (300 ms), but less than the PSP timeout. */
    private void slowPsp() {
        TestSupport.psp(pspUrl)
                .contentType(ContentType.JSON)
                .body("{\"latencyFixedMs\":2000}")
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    private double circuitOpenings() {
        Counter opened = registry.find("ft.circuitbreaker.opened.total")
                .tag("method", "com.payments.api.client.PspGateway.charge")
                .counter();
        return opened == null ? 0 : opened.count();
    }

    private double shed(String reason) {
        Counter counter = registry.find("payments.shed").tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }
}
