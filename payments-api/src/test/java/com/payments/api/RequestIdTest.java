package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.merchant;
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
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Every answer carries a {@code Request-Id}, new for each request, and every problem+json answer carries
 * the same id as its {@code instance}, so that a merchant can quote it; the other problem fields stay as they were.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class RequestIdTest {
    private static final String REQUEST_ID = "req_[0-9a-f]{32}";

    @Test
    void everyProblemCarriesItsRequestIdAsInstanceAndHeader() {
        Set<String> seen = new HashSet<>();
        Response[] problems = {
            given().get("/v1/payments/" + UUID.randomUUID()), // 401
            merchant(KEY_A).get("/v1/payments/" + UUID.randomUUID()), // 404
            merchant(KEY_A).contentType(ContentType.JSON).body("{}").post("/v1/payments"), // 400, no key
            merchant(KEY_A) // 413, refused by BodyLimitRoute before it is read
                    .header("Idempotency-Key", "k")
                    .contentType(ContentType.JSON)
                    .body("{\"orderId\":\"" + "x".repeat(70_000) + "\"}")
                    .post("/v1/payments"),
        };
        for (Response problem : problems) {
            assertThat(problem.statusCode()).isBetween(400, 499);
            assertThat(problem.contentType()).startsWith("application/problem+json");
            String id = problem.header("Request-Id");
            assertThat(id).matches(REQUEST_ID);
            assertThat(problem.<String>path("instance")).isEqualTo(id);
            assertThat(problem.<String>path("code")).isNotBlank();
            assertThat(problem.<String>path("type")).endsWith("/" + problem.<String>path("code"));
            assertThat(problem.<Integer>path("status")).isEqualTo(problem.statusCode());
            assertThat(seen.add(id)).as("a new id per request").isTrue();
        }
    }

    @Test
    void successfulAnswersCarryARequestIdToo() {
        Response created = TestSupport.capture(
                KEY_A,
                TestSupport.unique("key"),
                TestSupport.body(TestSupport.unique("order"), 700, "EUR", "tok_visa"));
        created.then().statusCode(201);
        assertThat(created.header("Request-Id")).matches(REQUEST_ID);
        Response read = merchant(KEY_A).get("/v1/payments/" + created.<String>path("id"));
        read.then().statusCode(200);
        assertThat(read.header("Request-Id")).matches(REQUEST_ID).isNotEqualTo(created.header("Request-Id"));
    }
}
