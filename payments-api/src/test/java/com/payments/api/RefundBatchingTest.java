package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.common.OutboxRow;
import com.payments.api.refunds.RefundRepository;
import com.payments.api.refunds.RefundRepository.Reservation;
import com.payments.contracts.sql.DatabaseBusyException;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.inject.Inject;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Concurrent refund reservations share one statement (StatementBatcher); each still gets its own answer. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class RefundBatchingTest {
    @Inject
    Pool pool;

    @Inject
    RefundRepository refunds;

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

    /** One refund request of the test and what it must get. */
    private record Ask(UUID paymentId, String key, long amount, String reason, int expectedStatus) {}

    @Test
    void concurrentReservationsShareStatementsAndEachGetsItsOwnAnswer() throws Exception {
        double batchedBefore = rowsPerStatementOverOne();
        List<Ask> asks = new ArrayList<>();
        Map<UUID, Long> accepted = new HashMap<>();
        for (int i = 0; i < 12; i++) {
            UUID paymentId = captured(10_000);
            // two that fit (one payment twice: never in one statement), one too large, one for no such payment
            asks.add(new Ask(paymentId, unique("rb"), 100 + i, "first " + i, 202));
            asks.add(new Ask(paymentId, unique("rb"), 200 + i, null, 202));
            asks.add(new Ask(paymentId, unique("rb"), 20_000, "too much", 422));
            asks.add(new Ask(UUID.randomUUID(), unique("rb"), 50, null, 404));
            accepted.put(paymentId, (100L + i) + (200L + i));
        }
        Collections.shuffle(asks, new java.util.Random(19));
        List<HttpRequest> requests = asks.stream()
                .map(a -> TestSupport.merchantPost(
                        "/v1/payments/" + a.paymentId() + "/refunds",
                        KEY_A,
                        a.key(),
                        a.reason() == null
                                ? "{\"amount\":" + a.amount() + "}"
                                : "{\"amount\":" + a.amount() + ",\"reason\":\"" + a.reason() + "\"}"))
                .toList();

        List<HttpResponse<String>> responses = TestSupport.concurrently(requests);

        for (int i = 0; i < asks.size(); i++) {
            Ask ask = asks.get(i);
            HttpResponse<String> response = responses.get(i);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(ask.expectedStatus());
            if (ask.expectedStatus() != 202) {
                assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", ask.key()))
                        .isZero();
                continue;
            }
            JsonObject answer = new JsonObject(response.body());
            assertThat(answer.getString("paymentId")).isEqualTo(ask.paymentId().toString());
            assertThat(answer.getLong("amount")).isEqualTo(ask.amount());
            UUID refundId = UUID.fromString(answer.getString("refundId"));
            Row stored = pool.preparedQuery(
                            """
                            SELECT r.payment_id, r.amount, r.reason, k.resource_id, k.response_status,
                                   (SELECT count(*) FROM outbox o
                                     WHERE o.key = r.payment_id::text AND o.payload->>'refundId' = r.id::text) AS commands
                              FROM refunds r JOIN idempotency_keys k ON k.resource_id = r.id
                             WHERE r.id = $1 AND k.key = $2""")
                    .execute(Tuple.of(refundId, ask.key()))
                    .await()
                    .atMost(Duration.ofSeconds(10))
                    .iterator()
                    .next();
            assertThat(stored.getUUID("payment_id")).isEqualTo(ask.paymentId());
            assertThat(stored.getLong("amount")).isEqualTo(ask.amount());
            assertThat(stored.getString("reason")).isEqualTo(ask.reason());
            assertThat(stored.getInteger("response_status")).isEqualTo(202);
            assertThat(stored.getLong("commands")).isEqualTo(1);
        }
        for (Map.Entry<UUID, Long> payment : accepted.entrySet()) {
            assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", payment.getKey()))
                    .isEqualTo(payment.getValue());
            assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", payment.getKey()))
                    .isEqualTo(2);
        }
        // some statement carried more than one reservation, or this test proved nothing about batching
        assertThat(rowsPerStatementOverOne()).isGreaterThan(batchedBefore);
    }

    @Test
    void aBatchPostgresRejectsIsRunAgainOneReservationAtATime() {
        List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> release = new CompletableFuture<>();
        AtomicBoolean first = new AtomicBoolean(true);
        StatementBatcher<Reservation, Boolean> batcher = new StatementBatcher<>(
                batch -> {
                    Uni<List<Boolean>> reserve = refunds.reserve(pool, batch);
                    // the first statement waits, so that the next four calls queue and go as one
                    return first.getAndSet(false)
                            ? Uni.createFrom().completionStage(release).flatMap(v -> reserve)
                            : reserve;
                },
                32,
                1,
                sizes::add,
                null,
                Reservation::paymentId);
        Reservation alone = reservation(captured(1_000), 100, null);
        Reservation good1 = reservation(captured(1_000), 200, null);
        // a reason over 500 characters breaks refunds_reason_check: PostgreSQL rejects the statement
        Reservation bad = reservation(captured(1_000), 300, "x".repeat(501));
        Reservation refused = reservation(captured(1_000), 5_000, null); // more than captured: not reserved
        Reservation good2 = reservation(captured(1_000), 400, null);

        CompletableFuture<Boolean> aloneResult = batcher.submit(alone).subscribeAsCompletionStage();
        List<CompletableFuture<Boolean>> queued = List.of(good1, bad, refused, good2).stream()
                .map(r -> batcher.submit(r).subscribeAsCompletionStage())
                .toList();
        release.complete(null);

        assertThat(aloneResult.join()).isTrue();
        assertThat(queued.get(0).join()).isTrue();
        assertThat(queued.get(2).join()).isFalse();
        assertThat(queued.get(3).join()).isTrue();
        assertThat(queued.get(1))
                .failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(Exception.class)
                .havingCause()
                .isInstanceOf(PgException.class);
        assertThat(sizes).containsExactly(1, 4, 1, 1, 1, 1);
        for (Reservation r : List.of(alone, good1, good2)) {
            assertThat(refundedAmount(r.paymentId())).isEqualTo(r.amount());
            assertThat(count(pool, "SELECT count(*) FROM refunds WHERE id = $1", r.refundId()))
                    .isEqualTo(1);
            assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", r.idempotencyKey()))
                    .isEqualTo(1);
        }
        for (Reservation r : List.of(bad, refused)) {
            assertThat(refundedAmount(r.paymentId())).isZero();
            assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", r.paymentId()))
                    .isZero();
            assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", r.idempotencyKey()))
                    .isZero();
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM outbox WHERE key = $1",
                            r.paymentId().toString()))
                    .isEqualTo(1); // the capture's own event only
        }
    }

    @Test
    void aReservationThatWaitsPastTheDatabaseBudgetIsShedAndWritesNothing() {
        CompletableFuture<Void> release = new CompletableFuture<>();
        AtomicBoolean first = new AtomicBoolean(true);
        StatementBatcher<Reservation, Boolean> batcher = new StatementBatcher<>(
                batch -> {
                    Uni<List<Boolean>> reserve = refunds.reserve(pool, batch);
                    return first.getAndSet(false)
                            ? Uni.createFrom().completionStage(release).flatMap(v -> reserve)
                            : reserve;
                },
                32,
                1,
                size -> {},
                Duration.ofMillis(100),
                Reservation::paymentId);
        Reservation running = reservation(captured(1_000), 100, null);
        Reservation late = reservation(captured(1_000), 200, null);

        CompletableFuture<Boolean> runningResult = batcher.submit(running).subscribeAsCompletionStage();
        CompletableFuture<Boolean> lateResult = batcher.submit(late).subscribeAsCompletionStage();
        // the running statement holds the only slot past the waiting call's budget
        CompletableFuture.delayedExecutor(400, java.util.concurrent.TimeUnit.MILLISECONDS)
                .execute(() -> release.complete(null));

        assertThat(runningResult.join()).isTrue();
        assertThat(lateResult)
                .failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(Exception.class)
                .havingCause()
                .isInstanceOf(DatabaseBusyException.class);
        assertThat(refundedAmount(late.paymentId())).isZero();
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", late.paymentId()))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", late.idempotencyKey()))
                .isZero();
    }

    private UUID captured(long amount) {
        Response response = TestSupport.capture(KEY_A, unique("key"), body(unique("order"), amount, "EUR", "tok_visa"));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    /** A reservation as RefundService builds it, for a payment of merchant A captured through the API. */
    private Reservation reservation(UUID paymentId, long amount, String reason) {
        Row payment = pool.preparedQuery("SELECT currency, psp_reference FROM payments WHERE id = $1")
                .execute(Tuple.of(paymentId))
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next();
        UUID refundId = UUID.randomUUID();
        return new Reservation(
                Fixtures.MERCHANT_A,
                paymentId,
                refundId,
                amount,
                payment.getString("currency"),
                payment.getString("psp_reference"),
                reason,
                Map.of(),
                new OutboxRow(
                        UUID.randomUUID(),
                        "RefundRequested",
                        "refund-commands",
                        "{\"refundId\":\"" + refundId + "\"}",
                        "{}"),
                unique("rkey"),
                new byte[32],
                "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private long refundedAmount(UUID paymentId) {
        return count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paymentId);
    }

    /** Reservations run so far beyond one per statement: grows only when a statement carries several. */
    private double rowsPerStatementOverOne() {
        DistributionSummary sizes =
                registry.find("payments.refund.reservation.batch.size").summary();
        return sizes == null ? 0 : sizes.totalAmount() - sizes.count();
    }
}
