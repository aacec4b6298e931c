package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The resolver against the real sandbox and PostgreSQL. The schedule is off in tests (%test): each test runs the
 * resolver's unit of work itself, also from two threads at once to play two replicas.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ResolverTest {
    @Inject
    Pool pool;

    @Inject
    PaymentResolver resolver;

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
        breakers.resetAll();
    }

    @Test
    void lostAnswerOfACapturedChargeResolvesToCapturedAndTheKeyReplaysIt() {
        String key = unique("key");
        String json = body(unique("order"), 2500, "EUR", PspUnderTest.lostAnswerSource(true));
        Response unknown = PspUnderTest.lostAnswer(pspUrl, true, () -> capture(KEY_A, key, json));
        unknown.then().statusCode(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(unknown.path("id"));

        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));

        assertThat(pspCounter(id, "chargeMovements")).isEqualTo(1);
        assertThat(pspCounter(id, "chargeRequests"))
                .as("the resolver only asked")
                .isEqualTo(1 + PspUnderTest.lookupRequests());
        assertThat(transitions(id)).containsExactly("PROCESSING->UNKNOWN capture 0", "UNKNOWN->CAPTURED resolver 1");
        assertSingleCaptureBooked(id);
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(replay.<String>path("id")).isEqualTo(id.toString());
    }

    @Test
    void chargeThePspNeverReceivedIsSentAgainWithTheSameKeyAndChargedOnce() {
        String key = unique("key");
        String json = body(unique("order"), 2700, "EUR", PspUnderTest.lostAnswerSource(false));
        Response unknown = PspUnderTest.lostAnswer(pspUrl, false, () -> capture(KEY_A, key, json));
        unknown.then().statusCode(202);
        UUID id = UUID.fromString(unknown.path("id"));
        assertThat(pspCounter(id, "chargeMovements")).isZero();

        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));

        assertThat(pspCounter(id, "chargeMovements")).isEqualTo(1);
        assertThat(pspCounter(id, "chargeRequests"))
                .as("the lost first request and one re-send")
                .isEqualTo(2);
        assertThat(transitions(id)).containsExactly("PROCESSING->UNKNOWN capture 0", "UNKNOWN->CAPTURED resolver 1");
        assertSingleCaptureBooked(id);
        capture(KEY_A, key, json).then().statusCode(201).header("Idempotent-Replayed", "true");
    }

    @Test
    void paymentLeftProcessingByACrashAfterTheChargeIsCapturedAndItsKeyCompleted() {
        // the process charged at the PSP and died before recording the outcome: PROCESSING + IN_PROGRESS key
        String key = unique("key");
        String orderId = unique("order");
        String json = body(orderId, 4200, "EUR", "tok_visa");
        UUID id = Fixtures.insertPayment(pool, UUID.randomUUID(), orderId, "PROCESSING", 4200, "tok_visa");
        Fixtures.insertInProgressKey(pool, key, json, id);
        PspUnderTest.charge(id, 4200, "tok_visa");
        capture(KEY_A, key, json).then().statusCode(409);

        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));

        assertThat(transitions(id)).containsExactly("PROCESSING->CAPTURED resolver 1");
        assertSingleCaptureBooked(id);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM idempotency_keys WHERE key = $1 AND status = 'COMPLETED' AND response_status = 201",
                        key))
                .isEqualTo(1);
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("id")).isEqualTo(id.toString());
        assertThat(pspCounter(id, "chargeMovements")).isEqualTo(1);
        assertThat(pspCounter(id, "chargeRequests")).isEqualTo(1 + PspUnderTest.lookupRequests());
    }

    @Test
    void declineFoundAtThePspFailsThePaymentAndNothingElse() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 900, "tok_chargeDeclined");
        PspUnderTest.charge(id, 900, "tok_chargeDeclined");

        resolveUntil(() -> paymentStatus(pool, id).equals("FAILED"));

        assertThat(transitions(id)).containsExactly("UNKNOWN->FAILED resolver 1");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payments WHERE id = $1 AND decline_code = $2",
                        id,
                        PspUnderTest.declinedCode()))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentFailed'",
                        id.toString()))
                .isEqualTo(1);
    }

    @Test
    void chargeThePspReportsWithAnotherAmountIsQueuedForOperationsAndNeverRecordsMoney() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 3000, "tok_visa");
        // the PSP holds a charge of 31.00 under our payment id (reference and key) where we hold 30.00
        PspUnderTest.charge(id, 3100, "tok_visa");

        resolveUntil(() -> mismatchItems(id) == 1 || !paymentStatus(pool, id).equals("UNKNOWN"));

        assertThat(paymentStatus(pool, id)).as("no money recorded").isEqualTo("UNKNOWN");
        assertThat(transitions(id)).isEmpty();
        assertNothingBooked(id);
        Row item = pool.preparedQuery(
                        "SELECT subject_type, status, details FROM operations_queue WHERE subject_id = $1 AND reason = 'psp_amount_mismatch'")
                .execute(Tuple.of(id.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(item.getString("subject_type")).isEqualTo("payment");
        assertThat(item.getString("status")).isEqualTo("OPEN");
        assertThat(item.getJsonObject("details").getString("detectedBy")).isEqualTo("resolver");
        assertThat(item.getJsonObject("details").getJsonObject("data").getLong("amount"))
                .isEqualTo(3100);
        assertThat(item.getJsonObject("details").getLong("paymentAmount")).isEqualTo(3000);
        assertThat(nextAttemptAt(id))
                .as("left for an operator, never claimed again")
                .isNull();
        long attempts = count(pool, "SELECT attempts FROM payments WHERE id = $1", id);

        // later runs neither ask again nor re-send a charge, and open no second item
        for (int i = 0; i < 3; i++) {
            resolver.runOnce().await().atMost(Duration.ofSeconds(30));
        }
        assertThat(count(pool, "SELECT attempts FROM payments WHERE id = $1", id))
                .isEqualTo(attempts);
        assertThat(pspCounter(id, "chargeRequests"))
                .as("only the test's own charge and the look-ups of the attempts before the stop")
                .isEqualTo((int) (1 + attempts * PspUnderTest.lookupRequests()));
        assertThat(pspCounter(id, "chargeMovements")).isEqualTo(1);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(mismatchItems(id)).isEqualTo(1);
        assertNothingBooked(id);
    }

    @Test
    void stuckPaymentWhoseChargeThePspReportsInAnotherCurrencyBecomesUnknownAndIsQueued() {
        String key = unique("key");
        String orderId = unique("order");
        String json = body(orderId, 4400, "EUR", "tok_visa");
        UUID id = Fixtures.insertPayment(pool, UUID.randomUUID(), orderId, "PROCESSING", 4400, "tok_visa");
        Fixtures.insertInProgressKey(pool, key, json, id);
        PspUnderTest.charge(id, 4400, "USD", "tok_visa");

        resolveUntil(() -> mismatchItems(id) == 1 || paymentStatus(pool, id).equals("CAPTURED"));

        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(transitions(id)).containsExactly("PROCESSING->UNKNOWN resolver 1");
        assertNothingBooked(id);
        assertThat(nextAttemptAt(id)).isNull();
        // the key is completed with the 202, so the merchant's retry sees the payment instead of 409 forever
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(202).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("status")).isEqualTo("UNKNOWN");
        assertThat(pspCounter(id, "chargeRequests")).isEqualTo((int)
                (1 + count(pool, "SELECT attempts FROM payments WHERE id = $1", id) * PspUnderTest.lookupRequests()));
    }

    @Test
    void escalatedPaymentHandedBackToTheResolverAndSettledResolvesItsOperationsItem() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 950, "tok_visa");
        PspUnderTest.charge(id, 950, "tok_visa");
        Fixtures.openDeadlineItem(pool, id);

        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));

        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline' AND status = 'RESOLVED' AND details ->> 'resolution' = 'resolver: CAPTURED'",
                        id.toString()))
                .isEqualTo(1);
    }

    @Test
    void pspThatKeepsFailingLeavesThePaymentUnknownThroughTheBackoffThenQueuesItForOperations() {
        Fixtures.faults(pspUrl, "{\"errorRate\":1.0}");
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1300, "tok_visa");
        OffsetDateTime created = createdAt(id);

        List<OffsetDateTime> schedule = new ArrayList<>();
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
                    OffsetDateTime next = nextAttemptAt(id);
                    if (next != null
                            && (schedule.isEmpty()
                                    || !schedule.get(schedule.size() - 1).equals(next))) {
                        schedule.add(next);
                    }
                    // under Stripe a replayed 500 also opens psp_charge_needs_attention: wait for the deadline's item
                    return count(
                                    pool,
                                    "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline'",
                                    id.toString())
                            == 1;
                });
        long itemsAtDeadline =
                count(pool, "SELECT count(*) FROM operations_queue WHERE subject_id = $1", id.toString());

        Row payment = pool.preparedQuery("SELECT attempts, next_attempt_at, last_error FROM payments WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next();
        int attempts = payment.getInteger("attempts");
        assertThat(attempts).as("several attempts before the deadline").isGreaterThanOrEqualTo(3);
        assertThat(payment.getValue("next_attempt_at")).as("no more attempts").isNull();
        assertThat(payment.getString("last_error")).startsWith("lookup: ");
        assertThat(schedule).hasSizeGreaterThanOrEqualTo(2);
        Row item = pool.preparedQuery(
                        "SELECT created_at, details FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline'")
                .execute(Tuple.of(id.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(item.getOffsetDateTime("created_at")).isAfterOrEqualTo(created.plusSeconds(4));
        assertThat(item.getJsonObject("details").getString("paymentId")).isEqualTo(id.toString());
        assertThat(item.getJsonObject("details").getInteger("attempts")).isEqualTo(attempts);
        assertThat(transitions(id)).isEmpty();
        assertThat(pspCounter(id, "chargeMovements")).isZero();

        // stopped: with the PSP back, further runs neither touch it nor open a second item
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        breakers.resetAll();
        for (int i = 0; i < 3; i++) {
            resolver.runOnce().await().atMost(Duration.ofSeconds(30));
        }
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(count(pool, "SELECT attempts FROM payments WHERE id = $1", id))
                .isEqualTo(attempts);
        assertThat(count(pool, "SELECT count(*) FROM operations_queue WHERE subject_id = $1", id.toString()))
                .isEqualTo(itemsAtDeadline);

        resolver.refreshMetrics().await().atMost(Duration.ofSeconds(10));
        String metrics = TestSupport.management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        assertThat(metric(metrics, "payments_unknown ")).isGreaterThanOrEqualTo(1);
        assertThat(metric(metrics, "payments_unknown_oldest_age_seconds ")).isGreaterThanOrEqualTo(4);
        assertThat(metric(metrics, "payments_operations_open ")).isGreaterThanOrEqualTo(1);
        assertThat(metric(metrics, "payments_resolutions_total{outcome=\"escalated\""))
                .isGreaterThanOrEqualTo(1);
        assertThat(metric(metrics, "payments_resolutions_total{outcome=\"still_unknown\""))
                .isGreaterThanOrEqualTo(2);
    }

    @Test
    void twoResolversAtOnceNeverWorkOnePaymentTwice() throws Exception {
        List<UUID> charged = new ArrayList<>();
        List<UUID> notReceived = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            UUID a = Fixtures.insertPayment(pool, "UNKNOWN", 100 + i, "tok_visa");
            PspUnderTest.charge(a, 100 + i, "tok_visa");
            charged.add(a);
            notReceived.add(Fixtures.insertPayment(pool, "PROCESSING", 200 + i, "tok_mastercard"));
        }
        int rounds = 5;
        CyclicBarrier barrier = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                results.add(threads.submit(() -> {
                    int claimed = 0;
                    for (int r = 0; r < rounds; r++) {
                        barrier.await();
                        claimed += resolver.runOnce().await().atMost(Duration.ofSeconds(60));
                    }
                    return claimed;
                }));
            }
            for (Future<Integer> result : results) {
                result.get();
            }
        } finally {
            threads.shutdownNow();
        }

        for (UUID id : charged) {
            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
            assertThat(transitions(id)).containsExactly("UNKNOWN->CAPTURED resolver 1");
            assertThat(pspCounter(id, "chargeRequests")).isEqualTo(1 + PspUnderTest.lookupRequests());
            assertSingleCaptureBooked(id);
        }
        for (UUID id : notReceived) {
            assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
            assertThat(transitions(id)).containsExactly("PROCESSING->CAPTURED resolver 1");
            assertThat(pspCounter(id, "chargeRequests"))
                    .as("exactly one re-send")
                    .isEqualTo(1);
            assertSingleCaptureBooked(id);
        }
        List<UUID> all = new ArrayList<>(charged);
        all.addAll(notReceived);
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = ANY($1) AND attempts = 1", (Object)
                        all.toArray(UUID[]::new)))
                .as("each payment claimed exactly once")
                .isEqualTo(all.size());
    }

    @Test
    void aClaimWhoseLeaseExpiredRecordsNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 700, "tok_visa");
        PspUnderTest.charge(id, 700, "tok_visa");
        // instance A claims with a lease that is already over; instance B claims the payment again
        var repository = io.quarkus.arc.Arc.container()
                .instance(com.payments.api.resolver.ResolverRepository.class)
                .get();
        var first = repository.claim(pool, 1000, Duration.ZERO).await().indefinitely().stream()
                .filter(c -> c.id().equals(id))
                .findFirst()
                .orElseThrow();
        assertThat(first.attempt()).isEqualTo(1);
        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));
        // B recorded as attempt 2; A's late work finds another attempt under the row lock and changes nothing
        assertThat(transitions(id)).containsExactly("UNKNOWN->CAPTURED resolver 2");
        assertThat(resolver.resolve(first).await().atMost(Duration.ofSeconds(30)))
                .isEqualTo("skipped");
        assertThat(transitions(id)).containsExactly("UNKNOWN->CAPTURED resolver 2");
        assertSingleCaptureBooked(id);
    }

    private void resolveUntil(BooleanSupplier done) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return done.getAsBoolean();
                });
    }

    private void assertSingleCaptureBooked(UUID id) {
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'CAPTURE' AND reference = $1",
                        id.toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentCaptured'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isEqualTo(1);
        assertThat(pspCounter(id, "chargeMovements")).isEqualTo(1);
    }

    private void assertNothingBooked(UUID id) {
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .as("no ledger transaction")
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .as("no outbox event")
                .isZero();
    }

    private long mismatchItems(UUID id) {
        return count(
                pool,
                "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'psp_amount_mismatch' AND status = 'OPEN'",
                id.toString());
    }

    private List<String> transitions(UUID id) {
        List<String> out = new ArrayList<>();
        pool.preparedQuery(
                        "SELECT from_status, to_status, actor, attempt FROM payment_transitions WHERE payment_id = $1 ORDER BY id")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .forEach(row -> out.add(
                        row.getString(0) + "->" + row.getString(1) + " " + row.getString(2) + " " + row.getInteger(3)));
        return out;
    }

    private int pspCounter(UUID id, String name) {
        return TestSupport.pspCounters(pspUrl, id)
                .then()
                .statusCode(200)
                .extract()
                .path(name);
    }

    private long openItems(UUID id) {
        return count(
                pool,
                "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND status = 'OPEN'",
                id.toString());
    }

    private OffsetDateTime createdAt(UUID id) {
        return pool.preparedQuery("SELECT created_at FROM payments WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getOffsetDateTime(0);
    }

    private OffsetDateTime nextAttemptAt(UUID id) {
        return pool.preparedQuery("SELECT next_attempt_at FROM payments WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getOffsetDateTime(0);
    }

    /** The value of the first sample line starting with {@code prefix}. */
    static double metric(String metrics, String prefix) {
        return metrics.lines()
                .filter(line -> line.startsWith(prefix))
                .findFirst()
                .map(line -> line.contains(" # ") ? line.substring(0, line.indexOf(" # ")) : line) // exemplar
                .map(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .orElse(-1.0);
    }
}
