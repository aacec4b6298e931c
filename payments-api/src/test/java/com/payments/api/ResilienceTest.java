package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.client.PspGateway;
import com.payments.api.client.PspNotSentException;
import com.payments.api.resolver.PaymentResolver;
import com.payments.api.resolver.ResolverRepository;
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
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import jakarta.ws.rs.ProcessingException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ResilienceTest {
    /** The advisory lock a held release waits for. */
    private static final int HOLD = 731_801;

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @Inject
    PaymentResolver resolver;

    @Inject
    ResolverRepository resolvers;

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
        assertThat(PspGateway.neverSent(new PspNotSentException("PSP not reached: connect_failed")))
                .isTrue();
        assertThat(PspGateway.neverSent(new ProcessingException(new ConnectException("refused"))))
                .as("a connection error alone proves nothing: it may be a re-send's, after the PSP got the charge")
                .isFalse();
        assertThat(PspGateway.neverSent(new TimeoutException())).isFalse();
        assertThat(PspGateway.neverSent(new ProcessingException(new java.io.IOException("Connection reset"))))
                .isFalse();
    }

    /**
     * The release of a charge that was never sent, delayed until a resolver claimed the payment (which may then
     * charge it): the payment and its key stay, the answer is the 202 UNKNOWN of a lost answer, and the resolver
     * charges it once. The test holds the release with a statement trigger on payments that waits for an advisory
     * lock the test holds (the trigger fires before any row is read or locked, so the resolver can claim the row).
     */
    @Test
    void releaseDelayedUntilTheResolverClaimedThePaymentDeletesNothingAndAnswers202Unknown() throws Exception {
        execute(
                """
                CREATE OR REPLACE FUNCTION test_hold_payment_delete() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_advisory_xact_lock_shared(%d); RETURN NULL; END $$"""
                        .formatted(HOLD));
        execute(
                """
                CREATE OR REPLACE TRIGGER test_hold_payment_delete BEFORE DELETE ON payments
                    FOR EACH STATEMENT EXECUTE FUNCTION test_hold_payment_delete()""");
        SqlConnection holder = pool.getConnection().await().indefinitely();
        try {
            HeldCapture held = heldReleaseOfANeverSentCharge(holder);
            String key = held.key();
            String json = held.json();
            String orderId = held.orderId();
            UUID id = UUID.fromString(pool.preparedQuery("SELECT id FROM payments WHERE order_id = $1")
                    .execute(Tuple.of(orderId))
                    .await()
                    .indefinitely()
                    .iterator()
                    .next()
                    .getUUID(0)
                    .toString());

            // the release is late: the payment is past its stuck-after time and a resolver claims it
            execute("UPDATE payments SET next_attempt_at = now() WHERE id = '" + id + "'");
            ResolverRepository.Claimed claim =
                    resolvers.claim(pool, 1000, Duration.ofSeconds(30)).await().indefinitely().stream()
                            .filter(c -> c.id().equals(id))
                            .findFirst()
                            .orElseThrow();
            holder.query("SELECT pg_advisory_unlock(" + HOLD + ")")
                    .execute()
                    .await()
                    .indefinitely();

            HttpResponse<String> released = held.answer().get(30, TimeUnit.SECONDS);
            assertThat(released.statusCode()).as(released.body()).isEqualTo(202);
            assertThat(new JsonObject(released.body()).getString("status")).isEqualTo("UNKNOWN");
            assertThat(new JsonObject(released.body()).getString("id")).isEqualTo(id.toString());
            assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM idempotency_keys WHERE key = $1 AND status = 'COMPLETED' AND response_status = 202",
                            key))
                    .isEqualTo(1);

            // the resolver's attempt goes on: the PSP never got the charge, so it sends it, once
            TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
            breakers.resetAll();
            assertThat(resolver.resolve(claim).await().atMost(Duration.ofSeconds(30)))
                    .isEqualTo("captured");
            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
            assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                    .isEqualTo(1);
            assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeRequests"))
                    .isEqualTo(1);
            Response replay = capture(KEY_A, key, json);
            replay.then().statusCode(201).header("Idempotent-Replayed", "true");
            assertThat(replay.<String>path("id")).isEqualTo(id.toString());
            assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                    .isEqualTo(1);
        } finally {
            holder.query("SELECT pg_advisory_unlock_all()").execute().await().indefinitely();
            holder.close().await().indefinitely();
            execute("DROP TRIGGER IF EXISTS test_hold_payment_delete ON payments");
            execute("DROP FUNCTION IF EXISTS test_hold_payment_delete()");
        }
    }

    /** A capture whose release waits on the test's advisory lock. */
    private record HeldCapture(
            String key, String orderId, String json, CompletableFuture<HttpResponse<String>> answer) {}

    /**
     * Opens the circuit, takes the advisory lock and sends a capture, until its release waits on the lock (the
     * circuit half-opens after 1 s in tests: a capture that reached the PSP after all is tried again with a new key).
     */
    private HeldCapture heldReleaseOfANeverSentCharge(SqlConnection holder) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        for (int attempt = 0; attempt < 5; attempt++) {
            String key = unique("key");
            String orderId = unique("order");
            String json = body(orderId, 2100, "EUR", "tok_visa");
            openCircuit();
            holder.query("SELECT pg_advisory_lock(" + HOLD + ")")
                    .execute()
                    .await()
                    .indefinitely();
            CompletableFuture<HttpResponse<String>> answer = client.sendAsync(
                    TestSupport.merchantPost("/v1/payments", KEY_A, key, json), HttpResponse.BodyHandlers.ofString());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> answer.isDone() || waitersOnHold() > 0);
            if (!answer.isDone()) {
                return new HeldCapture(key, orderId, json, answer);
            }
            holder.query("SELECT pg_advisory_unlock(" + HOLD + ")")
                    .execute()
                    .await()
                    .indefinitely();
        }
        throw new IllegalStateException("no capture was held at its release");
    }

    private void openCircuit() {
        Fixtures.faults(pspUrl, "{\"errorRate\":1.0}");
        for (int i = 0; i < 20; i++) {
            if (capture(KEY_A, unique("key"), body(unique("order"), 100, "EUR", "tok_visa"))
                            .statusCode()
                    == 503) {
                return;
            }
        }
        throw new IllegalStateException("circuit did not open");
    }

    private long waitersOnHold() {
        return count(
                pool,
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid::bigint = $1 AND NOT granted"
                        // pg_locks lists every database of the server
                        + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (long) HOLD);
    }

    private void execute(String sql) {
        pool.query(sql).execute().await().indefinitely();
    }
}
