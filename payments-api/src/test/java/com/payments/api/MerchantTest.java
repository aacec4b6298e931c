package com.payments.api;

import static com.payments.api.TestSupport.ADMIN;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Authentication, merchant isolation, reads, the operator API and the rate limit. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class MerchantTest {
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

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Test
    void merchantBCannotSeeOrRefundMerchantAsPayment() {
        String orderId = unique("order");
        Response created = capture(KEY_A, unique("key"), body(orderId, 5000, "EUR", "tok_visa"));
        created.then().statusCode(201);
        String id = created.path("id");
        // a reserved refund of A's payment, as the refunds flow writes it
        UUID refundId = UUID.randomUUID();
        pool.withTransaction(conn -> conn.preparedQuery(
                                "UPDATE payments SET refunded_amount = refunded_amount + 1200 WHERE id = $1")
                        .execute(Tuple.of(UUID.fromString(id)))
                        .flatMap(r -> conn.preparedQuery(
                                        """
                                        INSERT INTO refunds (id, payment_id, merchant_id, amount, currency)
                                        SELECT $1, id, merchant_id, 1200, currency FROM payments WHERE id = $2""")
                                .execute(Tuple.of(refundId, UUID.fromString(id)))))
                .await()
                .indefinitely();

        Response own = merchant(KEY_A).get("/v1/payments/" + id);
        own.then().statusCode(200);
        assertThat(own.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(own.<Integer>path("refundedAmount")).isEqualTo(1200);
        assertThat(own.<Integer>path("refundableAmount")).isEqualTo(3800);
        assertThat(own.<List<Object>>path("refunds")).hasSize(1);
        assertThat(own.<String>path("refunds[0].id")).isEqualTo(refundId.toString());
        merchant(KEY_A).get("/v1/refunds/" + refundId).then().statusCode(200);
        assertThat(merchant(KEY_A).get("/v1/payments?orderId=" + orderId).<List<Object>>path("data"))
                .hasSize(1);

        Response missing = merchant(KEY_B).get("/v1/payments/" + UUID.randomUUID());
        Response foreign = merchant(KEY_B).get("/v1/payments/" + id);
        foreign.then().statusCode(404).contentType("application/problem+json");
        // The same answer but for `instance`, this request's own id.
        assertThat(withoutInstance(foreign.asString()))
                .isEqualTo(withoutInstance(missing.asString()))
                .doesNotContain(orderId);
        merchant(KEY_B).get("/v1/refunds/" + refundId).then().statusCode(404);
        assertThat(merchant(KEY_B).get("/v1/payments?orderId=" + orderId).<List<Object>>path("data"))
                .isEmpty();
        // refunds are created by a later issue's endpoint; whatever answers there, B gets a 404 and nothing changes
        merchant(KEY_B)
                .header("Idempotency-Key", unique("key"))
                .contentType("application/json")
                .body("{\"amount\":100}")
                .post("/v1/payments/" + id + "/refunds")
                .then()
                .statusCode(404);
        assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", UUID.fromString(id)))
                .isEqualTo(1200);
        merchant(KEY_A).get("/v1/payments/not-a-uuid").then().statusCode(404);
    }

    @Test
    void keysArePerMerchant() {
        String key = unique("shared-key");
        Response a = capture(KEY_A, key, body(unique("order"), 100, "EUR", "tok_visa"));
        Response b = capture(KEY_B, key, body(unique("order"), 200, "EUR", "tok_visa"));
        a.then().statusCode(201);
        b.then().statusCode(201).header("Idempotent-Replayed", (String) null);
        assertThat(b.<String>path("id")).isNotEqualTo(a.<String>path("id"));
    }

    @Test
    void operatorsCreateMerchantsAndRotateKeys() {
        given().contentType("application/json")
                .body("{\"name\":\"Shop\"}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(401);
        given().header("Authorization", "Bearer wrong")
                .contentType("application/json")
                .body("{\"name\":\"Shop\"}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(401);

        Response created = given().header("Authorization", "Bearer " + ADMIN)
                .contentType("application/json")
                .body("{\"name\":\"Shop\",\"rateLimitPerSecond\":1000}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        String merchantId = created.path("merchantId");
        String firstKey = created.path("apiKey");
        assertThat(firstKey).startsWith("sk_live_");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM merchant_api_keys WHERE key_prefix = $1",
                        firstKey.substring(0, 12)))
                .isEqualTo(1);
        capture(firstKey, unique("key"), body(unique("order"), 100, "EUR", "tok_visa"))
                .then()
                .statusCode(201);

        Response rotated = given().header("Authorization", "Bearer " + ADMIN)
                .post("/v1/admin/merchants/" + merchantId + "/keys?revokeOthers=true");
        rotated.then().statusCode(201);
        assertThat(rotated.<Integer>path("revokedKeys")).isEqualTo(1);
        String secondKey = rotated.path("apiKey");
        merchant(secondKey).get("/v1/payments?orderId=x").then().statusCode(200);
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> merchant(firstKey).get("/v1/payments?orderId=x").statusCode() == 401);

        given().header("Authorization", "Bearer " + ADMIN)
                .post("/v1/admin/merchants/" + UUID.randomUUID() + "/keys")
                .then()
                .statusCode(404);
    }

    @Test
    void aNullRateLimitIsTheDefaultRate() {
        for (String body : List.of("{\"name\":\"Null rate\",\"rateLimitPerSecond\":null}", "{\"name\":\"No rate\"}")) {
            Response created = given().header("Authorization", "Bearer " + ADMIN)
                    .contentType("application/json")
                    .body(body)
                    .post("/v1/admin/merchants");
            created.then().statusCode(201);
            assertThat(count(
                            pool,
                            "SELECT rate_limit_per_second FROM merchants WHERE id = $1",
                            UUID.fromString(created.path("merchantId"))))
                    .as(body)
                    .isEqualTo(100);
        }
    }

    @Test
    void overItsRateAMerchantGets429WithRetryAfterAndNothingStored() throws Exception {
        String apiKey = given().header("Authorization", "Bearer " + ADMIN)
                .contentType("application/json")
                .body("{\"name\":\"Slow shop\",\"rateLimitPerSecond\":1}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(201)
                .extract()
                .path("apiKey");
        HttpClient client = HttpClient.newHttpClient();
        List<String> keys = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String key = unique("key");
            keys.add(key);
            calls.add(client.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/v1/payments"))
                            .header("Authorization", "Bearer " + apiKey)
                            .header("Idempotency-Key", key)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body(unique("order"), 100, "EUR", "tok_visa")))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        int limited = 0;
        for (int i = 0; i < calls.size(); i++) {
            HttpResponse<String> r = calls.get(i).get();
            assertThat(r.statusCode()).isIn(201, 429);
            if (r.statusCode() == 429) {
                limited++;
                assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(r.headers().firstValue("Content-Type"))
                        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
                assertThat(r.body()).contains("\"code\":\"rate_limited\"");
                assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", keys.get(i)))
                        .isZero();
            }
        }
        assertThat(limited).isGreaterThanOrEqualTo(1);
    }

    @Test
    void problemsAndRowCountsForUnauthenticatedReads() {
        Map<String, Long> before = TestSupport.rowCounts(pool);
        given().get("/v1/payments/" + UUID.randomUUID())
                .then()
                .statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", "Bearer");
        merchant(KEY_A).get("/v1/payments").then().statusCode(400);
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
    }

    private static String withoutInstance(String problem) {
        JsonObject json = new JsonObject(problem);
        assertThat(json.getString("instance")).startsWith("req_");
        json.remove("instance");
        return json.encode();
    }
}
