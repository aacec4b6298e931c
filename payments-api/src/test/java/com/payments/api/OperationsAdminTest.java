package com.payments.api;

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
import io.restassured.specification.RequestSpecification;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@code /v1/admin/operations}: operators list the items left for a human and resolve them, against PostgreSQL. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class OperationsAdminTest {
    @Inject
    Pool pool;

    @Test
    void operatorsListOpenItemsAndResolveEachOnceWithANote() {
        String first = "ops-" + UUID.randomUUID();
        String second = "ops-" + UUID.randomUUID();
        long firstId = open(first);
        long secondId = open(second);

        List<Map<String, Object>> open = operator()
                .get("/v1/admin/operations?limit=500")
                .then()
                .statusCode(200)
                .extract()
                .path("data");
        assertThat(open)
                .filteredOn(item -> List.of(first, second).contains(item.get("subjectId")))
                .extracting(item -> item.get("reason"), item -> item.get("status"))
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("refund_pending_too_long", "OPEN"),
                        org.assertj.core.groups.Tuple.tuple("refund_pending_too_long", "OPEN"));
        assertThat(open)
                .filteredOn(item -> first.equals(item.get("subjectId")))
                .singleElement()
                .satisfies(item -> assertThat(item.get("details")).isEqualTo(Map.of("amount", 900)));

        Response resolved = resolve(firstId, "{\"resolution\":\"refunded by hand, ticket 42\"}");
        resolved.then().statusCode(200);
        assertThat(resolved.<String>path("status")).isEqualTo("RESOLVED");
        assertThat(resolved.<String>path("resolvedAt")).isNotBlank();
        assertThat(resolved.<Map<String, Object>>path("details"))
                .containsEntry("amount", 900)
                .containsEntry("resolution", "refunded by hand, ticket 42");
        Row row = item(firstId);
        assertThat(row.getString("status")).isEqualTo("RESOLVED");
        assertThat(row.getValue("resolved_at")).isNotNull();

        Response again = resolve(firstId, "{\"resolution\":\"twice\"}");
        again.then().statusCode(409).contentType(startsWith("application/problem+json"));
        assertThat(again.<String>path("code")).isEqualTo("operations_item_resolved");
        assertThat(item(firstId).getJsonObject("details").getString("resolution"))
                .isEqualTo("refunded by hand, ticket 42");

        List<String> stillOpen = operator()
                .get("/v1/admin/operations?limit=500")
                .then()
                .statusCode(200)
                .extract()
                .path("data.subjectId");
        assertThat(stillOpen).contains(second).doesNotContain(first);
        List<String> resolvedOnes = operator()
                .get("/v1/admin/operations?status=RESOLVED&limit=500")
                .then()
                .statusCode(200)
                .extract()
                .path("data.subjectId");
        assertThat(resolvedOnes).contains(first).doesNotContain(second);
        assertThat(item(secondId).getString("status")).isEqualTo("OPEN");
    }

    @Test
    void badRequestsAreProblemsAndResolveNothing() {
        long id = open("ops-" + UUID.randomUUID());
        Map<String, Long> before = TestSupport.rowCounts(pool);
        expectProblem(operator().get("/v1/admin/operations?status=open"), 400, "invalid_status");
        expectProblem(operator().get("/v1/admin/operations?limit=0"), 400, "invalid_limit");
        expectProblem(operator().get("/v1/admin/operations?limit=501"), 400, "invalid_limit");
        expectProblem(operator().get("/v1/admin/operations?limit=ten"), 400, "invalid_limit");
        expectProblem(resolve(id, "{}"), 400, "invalid_resolution");
        expectProblem(resolve(id, "{\"resolution\":\"  \"}"), 400, "invalid_resolution");
        expectProblem(resolve(id, "{\"resolution\":\"" + "x".repeat(501) + "\"}"), 400, "invalid_resolution");
        expectProblem(resolve(id, "{\"resolution\":42}"), 400, "invalid_resolution");
        expectProblem(resolve(id, "{\"resolution\":\"ok\",\"status\":\"OPEN\"}"), 400, "unknown_field");
        expectProblem(resolve(id, "not json"), 400, "invalid_json");
        expectProblem(resolve(Long.MAX_VALUE, "{\"resolution\":\"ok\"}"), 404, "not_found");
        expectProblem(
                operator()
                        .contentType(ContentType.JSON)
                        .body("{\"resolution\":\"ok\"}")
                        .post("/v1/admin/operations/abc/resolve"),
                404,
                "not_found");
        expectProblem(
                given().header("Authorization", "Bearer " + TestSupport.KEY_A).get("/v1/admin/operations"),
                401,
                "unauthorized");
        assertThat(item(id).getString("status")).isEqualTo("OPEN");
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
    }

    private static RequestSpecification operator() {
        return given().header("Authorization", "Bearer " + TestSupport.ADMIN);
    }

    private static Response resolve(long id, String json) {
        return operator().contentType(ContentType.JSON).body(json).post("/v1/admin/operations/" + id + "/resolve");
    }

    private static void expectProblem(Response r, int status, String code) {
        assertThat(r.statusCode()).as(r.asString()).isEqualTo(status);
        assertThat(r.contentType()).startsWith("application/problem+json");
        assertThat(r.<String>path("code")).isEqualTo(code);
    }

    private static org.hamcrest.Matcher<String> startsWith(String prefix) {
        return org.hamcrest.Matchers.startsWith(prefix);
    }

    private long open(String subjectId) {
        return pool.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                        VALUES ('refund', $1, 'refund_pending_too_long', '{"amount": 900}') RETURNING id""")
                .execute(Tuple.of(subjectId))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getLong(0);
    }

    private Row item(long id) {
        return pool.preparedQuery("SELECT status, resolved_at, details FROM operations_queue WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next();
    }
}
