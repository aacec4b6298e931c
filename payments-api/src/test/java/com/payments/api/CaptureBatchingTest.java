package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.NewPayment;
import com.payments.api.payment.PaymentRepository.OutcomeRow;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Concurrent captures share the capture path's statements (StatementBatcher); each still gets its own outcome. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class CaptureBatchingTest {
    @Inject
    Pool pool;

    @Inject
    PaymentRepository payments;

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

    @Test
    void concurrentCapturesShareStatementsAndEachGetsItsOwnOutcome() throws Exception {
        double claimsBefore = rowsPerStatementOverOne("claim");
        double outcomesBefore = rowsPerStatementOverOne("outcome");
        int n = 60;
        List<String> orderIds = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String orderId = unique("batch-" + i);
            orderIds.add(orderId);
            // every third one declined: captures and declines end up in the same statements
            String source = i % 3 == 0 ? "tok_chargeDeclined" : "tok_visa";
            requests.add(TestSupport.merchantPost(
                    "/v1/payments", KEY_A, unique("batch-key"), body(orderId, 1000 + i, "EUR", source)));
        }
        List<HttpResponse<String>> responses = TestSupport.concurrently(requests);
        for (int i = 0; i < n; i++) {
            HttpResponse<String> response = responses.get(i);
            boolean declined = i % 3 == 0;
            assertThat(response.statusCode()).isEqualTo(declined ? 402 : 201);
            JsonObject payment = new JsonObject(response.body());
            assertThat(payment.getString("orderId")).isEqualTo(orderIds.get(i));
            assertThat(payment.getLong("amount")).isEqualTo(1000L + i);
            assertThat(payment.getString("status")).isEqualTo(declined ? "FAILED" : "CAPTURED");

            Row stored = pool.preparedQuery(
                            """
                                SELECT p.status, p.amount, k.status AS key_status, k.response_status, k.response_body,
                                       (SELECT count(*) FROM ledger_transactions WHERE reference = p.id::text) AS ledger,
                                       (SELECT count(*) FROM outbox WHERE key = p.id::text) AS events
                                  FROM payments p JOIN idempotency_keys k ON k.resource_id = p.id
                                 WHERE p.order_id = $1""")
                    .execute(Tuple.of(orderIds.get(i)))
                    .await()
                    .indefinitely()
                    .iterator()
                    .next();
            assertThat(stored.getString("status")).isEqualTo(payment.getString("status"));
            assertThat(stored.getLong("amount")).isEqualTo(1000L + i);
            assertThat(stored.getString("key_status")).isEqualTo("COMPLETED");
            assertThat(stored.getInteger("response_status")).isEqualTo(response.statusCode());
            assertThat(new String(stored.getBuffer("response_body").getBytes(), StandardCharsets.UTF_8))
                    .isEqualTo(response.body());
            assertThat(stored.getLong("ledger")).isEqualTo(declined ? 0 : 1);
            assertThat(stored.getLong("events")).isEqualTo(1);
            assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderIds.get(i)))
                    .isEqualTo(1);
        }
        // some statement carried more than one capture, or this test proved nothing about batching
        assertThat(rowsPerStatementOverOne("claim") + rowsPerStatementOverOne("outcome"))
                .isGreaterThan(claimsBefore + outcomesBefore);
    }

    @Test
    void aBatchPostgresRejectsIsRunAgainOneCallAtATime() {
        List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> release = new CompletableFuture<>();
        AtomicBoolean first = new AtomicBoolean(true);
        StatementBatcher<NewPayment, Payment> batcher = new StatementBatcher<>(
                batch -> {
                    Uni<List<Payment>> insert = payments.insertProcessingClaimingKeys(pool, batch);
                    // the first statement waits, so that the next three calls queue and go as one
                    return first.getAndSet(false)
                            ? Uni.createFrom().completionStage(release).flatMap(v -> insert)
                            : insert;
                },
                32,
                1,
                sizes::add);
        NewPayment alone = newPayment(100);
        NewPayment good1 = newPayment(200);
        NewPayment bad = newPayment(0); // amount 0 breaks payments_amount_check: PostgreSQL rejects the statement
        NewPayment good2 = newPayment(300);

        CompletableFuture<Payment> aloneResult = batcher.submit(alone).subscribeAsCompletionStage();
        List<CompletableFuture<Payment>> queued = List.of(good1, bad, good2).stream()
                .map(p -> batcher.submit(p).subscribeAsCompletionStage())
                .toList();
        release.complete(null);

        assertThat(aloneResult.join().id()).isEqualTo(alone.id());
        assertThat(queued.get(0).join().id()).isEqualTo(good1.id());
        assertThat(queued.get(2).join().id()).isEqualTo(good2.id());
        assertThat(queued.get(1))
                .failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(Exception.class)
                .havingCause()
                .isInstanceOfSatisfying(
                        PgException.class, e -> assertThat(e.getConstraint()).isEqualTo("payments_amount_check"));
        assertThat(sizes).containsExactly(1, 3, 1, 1, 1);
        for (NewPayment p : List.of(alone, good1, good2)) {
            assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1", p.id()))
                    .isEqualTo(1);
        }
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1", bad.id()))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", bad.idempotencyKey()))
                .isZero();
    }

    @Test
    void theOutcomeStatementIsPreparedOnceWithAGenericPlan() {
        OutcomeRow nothingToMove = new OutcomeRow(
                UUID.randomUUID(),
                PaymentStatus.CAPTURED,
                "ch_none",
                null,
                null,
                null,
                201,
                new byte[] {'{', '}'},
                null);
        Row prepared = pool.withConnection(conn -> payments.recordOutcomes(conn, "test", List.of(nothingToMove))
                        .repeat()
                        .atMost(3)
                        .collect()
                        .last()
                        .flatMap(moved -> conn.query(
                                        """
                                        SELECT count(*) AS statements, sum(generic_plans) AS generic,
                                               sum(custom_plans) AS custom
                                          FROM pg_prepared_statements WHERE statement LIKE '%moved AS (%'""")
                                .execute()))
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next();
        // a statement over the pg client's cache limit would not be here at all: parsed and planned on every run
        assertThat(prepared.getLong("statements")).isEqualTo(1);
        assertThat(prepared.getLong("custom")).isZero();
        assertThat(prepared.getLong("generic")).isPositive();
    }

    private static NewPayment newPayment(long amount) {
        return new NewPayment(
                UUID.randomUUID(),
                Fixtures.MERCHANT_A,
                unique("order"),
                amount,
                "EUR",
                "tok_visa",
                Map.of(),
                unique("key"),
                new byte[32],
                Payment.AUTOMATIC);
    }

    /** Captures run so far beyond one per statement: grows only when a statement carries several. */
    private double rowsPerStatementOverOne(String statement) {
        DistributionSummary sizes = registry.find("payments.capture.batch.size")
                .tag("statement", statement)
                .summary();
        return sizes == null ? 0 : sizes.totalAmount() - sizes.count();
    }
}
