package com.payments.api;

import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
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
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A slow PSP with spare capacity gets as many captures in flight as its latency needs. The old fixed
 * bulkhead (128 running + 256 waiting) shed everything beyond 384 at once; the adaptive limit (psp-common) takes them
 * all, and each is charged exactly once.
 */
@QuarkusTest
@TestProfile(SlowPspCaptureTest.PatientPspTimeout.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class SlowPspCaptureTest {
    /** More than the old bulkhead's 128 + 256. */
    static final int CAPTURES = 500;

    static final int PSP_LATENCY_MS = 300;

    /**
     * On a loaded 2-core CI machine the sandbox's JVM, starved of CPU by 500 captures at once, answered some 300 ms
     * charges after more than the test profile's 5 s PSP timeout (outcome unknown, 202): a PSP that slow is not what
     * this test is about, so the timeout here is long. The adaptive limit and its defaults are unchanged.
     */
    public static class PatientPspTimeout implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.fault-tolerance.\"com.payments.api.client.PspGateway/charge\".timeout.value", "30000",
                    "psp.sandbox.call-timeout", "40s");
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
    void slowPsp() {
        TestSupport.warmUp(pspUrl, breakers);
        TestSupport.psp(pspUrl)
                .contentType(ContentType.JSON)
                .body("{\"latencyFixedMs\":" + PSP_LATENCY_MS + "}")
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    @AfterEach
    void resetFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
    }

    @Test
    void moreConcurrentCapturesThanTheOldBulkheadAllowedAllSucceedWithOneChargeEach() throws Exception {
        String apiKey = merchantWithoutRateLimit();
        double shedBefore = shed();
        List<String> orderIds = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            String orderId = unique("slow-" + i);
            orderIds.add(orderId);
            requests.add(TestSupport.merchantPost(
                    "/v1/payments", apiKey, unique("slow-key"), body(orderId, 100 + i, "EUR", "tok_visa")));
        }

        List<HttpResponse<String>> responses = TestSupport.concurrently(requests);

        Set<UUID> ids = new HashSet<>();
        for (int i = 0; i < CAPTURES; i++) {
            HttpResponse<String> response = responses.get(i);
            assertThat(response.statusCode())
                    .as("capture %d: %s", i, response.body())
                    .isEqualTo(201);
            JsonObject payment = new JsonObject(response.body());
            assertThat(payment.getString("orderId")).isEqualTo(orderIds.get(i));
            assertThat(payment.getString("status")).isEqualTo("CAPTURED");
            ids.add(UUID.fromString(payment.getString("id")));
        }
        assertThat(ids).hasSize(CAPTURES);
        for (UUID id : ids) {
            assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                    .as("charges of payment %s", id)
                    .isEqualTo(1);
            assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND status = 'CAPTURED'", id))
                    .isEqualTo(1);
        }
        assertThat(shed())
                .as("nothing shed under a slow PSP with spare capacity")
                .isEqualTo(shedBefore);
    }

    /** A merchant of its own whose rate limit the burst cannot reach. */
    private static String merchantWithoutRateLimit() {
        return given().header("Authorization", "Bearer " + TestSupport.ADMIN)
                .contentType(ContentType.JSON)
                .body("{\"name\":\"slow-psp\",\"rateLimitPerSecond\":1000000}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(201)
                .extract()
                .path("apiKey");
    }

    private double shed() {
        return registry.find("payments.shed").counters().stream()
                .mapToDouble(Counter::count)
                .sum();
    }
}
