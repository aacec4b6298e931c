package com.payments.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.idempotency.IdempotencyCleanupJob;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The state machine in Java against the SQL trigger, key housekeeping, metrics and OpenAPI. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class OperationsTest {
    private static final UUID MERCHANT = UUID.fromString("00000000-0000-4000-8000-00000000000a");

    static final class Rollback extends RuntimeException {}

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

    @Inject
    IdempotencyCleanupJob cleanup;

    @Test
    void transitionTableInJavaIsTheOneTheDatabaseEnforces() {
        for (PaymentStatus from : PaymentStatus.values()) {
            for (PaymentStatus to : PaymentStatus.values()) {
                if (from == to) {
                    continue;
                }
                UUID id = UUID.randomUUID();
                // a row that the other constraints (V98) accept in both states: the capture method of the states,
                // a captured amount exactly while a manual payment is (being) captured
                boolean allowedBySql = pool.withTransaction(conn -> conn.preparedQuery(
                                        """
                                        INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, psp_reference,
                                                              capture_method, authorized_at, captured_amount)
                                        SELECT $1, $2, 'sm', 1, 'EUR', 'tok_visa', $3, 'ch_x', m, now(),
                                               CASE WHEN m = 'MANUAL' AND $3 IN ('CAPTURING', 'CAPTURED') THEN 1 END
                                          FROM (SELECT CASE WHEN $3 IN ('PROCESSING', 'UNKNOWN', 'CAPTURED', 'FAILED')
                                                            THEN 'AUTOMATIC' ELSE 'MANUAL' END AS m) c""")
                                .execute(Tuple.of(id, MERCHANT, from.name()))
                                .flatMap(r -> conn.preparedQuery(
                                                """
                                                UPDATE payments SET status = $2,
                                                       captured_amount = CASE WHEN capture_method = 'MANUAL'
                                                                               AND $2 IN ('CAPTURING', 'CAPTURED') THEN 1 END
                                                 WHERE id = $1""")
                                        .execute(Tuple.of(id, to.name())))
                                // roll back whatever happened: only the trigger's verdict matters
                                .flatMap(r -> Uni.createFrom().<Boolean>failure(new Rollback())))
                        .onFailure()
                        .recoverWithUni(e -> e instanceof Rollback
                                ? Uni.createFrom().item(true)
                                : e.getMessage().contains("illegal payment transition")
                                        ? Uni.createFrom().item(false)
                                        : Uni.createFrom().failure(e))
                        .await()
                        .indefinitely();
                assertThat(from.canMoveTo(to)).as(from + " -> " + to).isEqualTo(allowedBySql);
            }
        }
    }

    @Test
    void housekeepingDeletesOnlyKeysFinalForLongerThanTheRetention() {
        List<String> keys = new ArrayList<>();
        String run = UUID.randomUUID().toString();
        // kind, completed, hours since the key was stored, hours since its resource became final (null: not final)
        List<Object[]> kinds = List.of(
                new Object[] {"final-25h", true, 30, 25},
                new Object[] {"final-23h", true, 30, 23},
                new Object[] {"not-final-30h", true, 30, null},
                new Object[] {"in-progress-30h", false, 30, null});
        for (Object[] kind : kinds) {
            String key = run + "-" + kind[0];
            keys.add(key);
            boolean completed = (Boolean) kind[1];
            pool.preparedQuery(
                            """
                            INSERT INTO idempotency_keys (merchant_id, key, request_hash, status, response_status, response_body,
                                                          created_at, final_at)
                            VALUES ($1, $2, $3, $4, $5, $6, now() - make_interval(hours => $7),
                                    now() - make_interval(hours => $8))""")
                    .execute(Tuple.from(java.util.Arrays.asList(
                            MERCHANT,
                            key,
                            Buffer.buffer(new byte[32]),
                            completed ? "COMPLETED" : "IN_PROGRESS",
                            completed ? 201 : null,
                            completed ? Buffer.buffer("{}") : null,
                            kind[2],
                            kind[3])))
                    .await()
                    .indefinitely();
        }
        assertThat(cleanup.purgeExpired().await().indefinitely()).isGreaterThanOrEqualTo(1L);
        List<String> left = new ArrayList<>();
        pool.preparedQuery("SELECT key FROM idempotency_keys WHERE key LIKE $1 ORDER BY key")
                .execute(Tuple.of(run + "%"))
                .await()
                .indefinitely()
                .forEach(row -> left.add(row.getString(0)));
        assertThat(left).containsExactly(run + "-final-23h", run + "-in-progress-30h", run + "-not-final-30h");
    }

    @Test
    void metricsAndOpenApiDescribeTheApiOnTheManagementPort() {
        TestSupport.capture(
                        TestSupport.KEY_A,
                        TestSupport.unique("key"),
                        TestSupport.body(TestSupport.unique("order"), 100, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
        String metrics = TestSupport.management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertThat(metrics)
                .contains("payments_captures_total{outcome=\"captured\"")
                .contains("payments_psp_latency_seconds")
                .contains("ft_circuitbreaker_state");
        String openapi = TestSupport.management()
                .get("/q/openapi?format=json")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        for (String code : List.of(
                "\"201\"", "\"202\"", "\"400\"", "\"401\"", "\"402\"", "\"404\"", "\"409\"", "\"422\"", "\"429\"",
                "\"503\"")) {
            assertThat(openapi).contains(code);
        }
        TestSupport.management().get("/q/health/ready").then().statusCode(200);
        TestSupport.management().get("/q/health/live").then().statusCode(200);
        for (String path : List.of("/q/metrics", "/q/openapi", "/q/health/ready", "/q/swagger-ui/")) {
            given().get(path).then().statusCode(404);
        }
    }

    /** Without payments.admin.management-only (local runs, benchmarks) the operator API answers on both ports. */
    @Test
    void operatorApiIsOnBothPortsByDefault() {
        for (var on : List.of(given(), TestSupport.management())) {
            on.header("Authorization", "Bearer " + TestSupport.ADMIN)
                    .get("/v1/admin/operations")
                    .then()
                    .statusCode(200);
        }
    }
}
