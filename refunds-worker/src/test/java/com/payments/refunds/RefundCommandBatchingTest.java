package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.contracts.sql.RefundSettlement;
import com.payments.contracts.sql.RefundSettlement.ByEvent;
import com.payments.contracts.sql.RefundSettlement.Settled;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.repository.RefundRepository;
import com.payments.refunds.repository.RefundRepository.CommandClaim;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Concurrent commands' claims ({@link RefundRepository#claimForCommands}) and outcomes (a PSP success or decline,
 * {@link RefundSettlement#settleOnce}) share statements (StatementBatcher); each refund is still claimed and settled
 * once, and each call gets its own answer.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class RefundCommandBatchingTest {
    private static final int PAYMENTS = 12;

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @Inject
    MeterRegistry registry;

    @Inject
    RefundsConfig config;

    @Inject
    RefundRepository repository;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    Fixtures fx;

    @BeforeEach
    void setUp() {
        fx = new Fixtures(pool, mapper, pspUrl);
    }

    /**
     * The first refund's outcome statement waits for a row lock (its stuck item, held by the test as an operator's
     * transaction would), so the outcomes of the refunds of {@code PAYMENTS} other payments, answered by the PSP
     * meanwhile, queue behind it and go together once it ends.
     */
    @Test
    void concurrentOutcomesShareStatementsAndEachRefundSettlesOnce() throws Exception {
        double batchedBefore = rowsPerStatementOverOne();
        Fixtures.Captured blockerPayment = fx.capture("tok_visa", 5_000);
        UUID blocker = fx.reserve(blockerPayment, 500);
        fx.query(
                "INSERT INTO operations_queue (subject_type, subject_id, reason, details)"
                        + " VALUES ('refund', $1, 'refund_pending_too_long', '{}')",
                blocker.toString());
        List<RefundRequested> commands = commandsOfOtherPayments();

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> lockHolder = holdUntil(
                release, "SELECT 1 FROM operations_queue WHERE subject_id = $1 FOR UPDATE", blocker.toString());
        try {
            fx.publish(fx.command(blockerPayment, blocker, 500));
            await().atMost(Fixtures.WAIT)
                    .until(() -> fx.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                    + " AND query LIKE '%settle_refund%'")
                            >= 1);

            commands.forEach(command -> fx.publish(command));
            await().atMost(Fixtures.WAIT)
                    .until(() -> commands.stream().allMatch(c -> fx.pspRefundMovements(c.refundId()) == 1));
            // the PSP answered them all: give their outcomes a moment to reach the queue
            Thread.sleep(1_000);
        } finally {
            release.complete(null);
        }
        lockHolder.get(Fixtures.WAIT.toSeconds(), TimeUnit.SECONDS);

        List<UUID> refunds =
                new ArrayList<>(commands.stream().map(RefundRequested::refundId).toList());
        refunds.add(blocker);
        await().atMost(Fixtures.WAIT)
                .until(() -> refunds.stream().allMatch(id -> fx.status(id).equals("SUCCEEDED")));
        for (UUID refund : refunds) {
            assertThat(fx.pspRefundMovements(refund))
                    .as("PSP movements of " + refund)
                    .isEqualTo(1);
            assertThat(fx.count(
                            "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1",
                            refund.toString()))
                    .as("REFUND ledger transactions of " + refund)
                    .isEqualTo(1);
            assertThat(fx.count(
                            "SELECT count(*) FROM outbox WHERE event_type = 'RefundSucceeded'"
                                    + " AND payload ->> 'refundId' = $1",
                            refund.toString()))
                    .as("RefundSucceeded events of " + refund)
                    .isEqualTo(1);
        }
        for (RefundRequested command : commands) {
            assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", command.eventId()))
                    .isEqualTo(1);
        }
        assertThat(fx.count(
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND status = 'RESOLVED'",
                        blocker.toString()))
                .isEqualTo(1);
        // some statement carried more than one outcome, or this test proved nothing about batching
        assertThat(rowsPerStatementOverOne()).isGreaterThan(batchedBefore);
    }

    /**
     * The claim of the first refund waits for its row (locked by the test, as a concurrent writer would), so the claims
     * of the commands of {@code PAYMENTS} other payments queue behind it and go together once it ends; each refund is
     * sent to the PSP once and succeeds.
     */
    @Test
    void concurrentClaimsShareStatementsAndEachRefundIsSentOnce() throws Exception {
        double batchedBefore = claimsPerStatementOverOne();
        Fixtures.Captured blockerPayment = fx.capture("tok_visa", 5_000);
        UUID blocker = fx.reserve(blockerPayment, 500);
        List<RefundRequested> commands = commandsOfOtherPayments();

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> lockHolder =
                holdUntil(release, "SELECT 1 FROM refunds WHERE id = $1 FOR UPDATE", blocker);
        try {
            fx.publish(fx.command(blockerPayment, blocker, 500));
            // the claim statement, by words within the first 1,024 bytes of its text (track_activity_query_size)
            await().atMost(Fixtures.WAIT)
                    .until(() -> fx.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                    + " AND query LIKE '%AS t (event_id, refund_id%'")
                            >= 1);
            commands.forEach(command -> fx.publish(command));
            // the commands reach the consumer and their claims queue behind the waiting one
            Thread.sleep(1_000);
            assertThat(commands.stream()
                            .mapToInt(c -> fx.pspRefundRequests(c.refundId()))
                            .sum())
                    .as("PSP requests before the first claim statement ended")
                    .isZero();
        } finally {
            release.complete(null);
        }
        lockHolder.get(Fixtures.WAIT.toSeconds(), TimeUnit.SECONDS);

        List<UUID> refunds =
                new ArrayList<>(commands.stream().map(RefundRequested::refundId).toList());
        refunds.add(blocker);
        await().atMost(Fixtures.WAIT)
                .until(() -> refunds.stream().allMatch(id -> fx.status(id).equals("SUCCEEDED")));
        for (UUID refund : refunds) {
            assertThat(fx.pspRefundMovements(refund))
                    .as("PSP movements of " + refund)
                    .isEqualTo(1);
            assertThat(fx.refund(refund).getInteger("attempts"))
                    .as("attempts of " + refund)
                    .isEqualTo(1);
            assertThat(ledgerTransactions(refund))
                    .as("REFUND ledger transactions of " + refund)
                    .isEqualTo(1);
        }
        // some claim statement carried more than one command, or this test proved nothing about batching
        assertThat(claimsPerStatementOverOne()).isGreaterThan(batchedBefore);
    }

    /**
     * One claim statement of mixed commands answers each in its order and claims only the refund that is PENDING, free
     * and agrees with its command.
     */
    @Test
    void aClaimStatementAnswersEachCommandInOrder() {
        Fixtures.Captured payment = fx.capture("tok_visa", 10_000);
        RefundRequested fresh = fx.command(payment, fx.reserve(payment, 100), 100);
        RefundRequested appliedBefore = fx.command(payment, fx.reserve(payment, 200), 200);
        fx.query(
                "INSERT INTO consumed_events (consumer, event_id) VALUES ($1, $2)",
                config.consumerName(),
                appliedBefore.eventId());
        RefundRequested leased = fx.command(payment, fx.reserve(payment, 300), 300);
        fx.query("UPDATE refunds SET next_attempt_at = now() + interval '1 hour' WHERE id = $1", leased.refundId());
        RefundRequested disagreeing = fx.command(payment, fx.reserve(payment, 400), 401);
        RefundRequested unknown = fx.command(payment, UUID.randomUUID(), 500);
        RefundRequested alreadyFinal = fx.command(payment, fx.reserve(payment, 600), 600);
        fx.query("SELECT settle_refund($1, 'SUCCEEDED', 're_final', NULL, 'test', '{}')", alreadyFinal.refundId());

        List<CommandClaim> claims = repository
                .claimForCommands(
                        pool,
                        config.consumerName(),
                        Duration.ofHours(1),
                        List.of(fresh, appliedBefore, leased, disagreeing, unknown, alreadyFinal))
                .await()
                .atMost(Fixtures.WAIT);

        assertThat(claims).hasSize(6);
        assertThat(claims.get(0).claimed()).isTrue();
        assertThat(claims.get(0).refund().id()).isEqualTo(fresh.refundId());
        assertThat(claims.get(0).refund().attempts()).isEqualTo(1);
        assertThat(claims.get(1).applied()).isTrue();
        assertThat(claims.get(1).refund()).isNull();
        assertThat(claims.get(2).claimed()).isFalse();
        assertThat(claims.get(2).refund().id()).isEqualTo(leased.refundId());
        assertThat(claims.get(3).claimed()).isFalse();
        assertThat(claims.get(3).refund().amount()).isEqualTo(400);
        assertThat(claims.get(4).refund()).isNull();
        assertThat(claims.get(4).applied()).isFalse();
        assertThat(claims.get(5).claimed()).isFalse();
        assertThat(claims.get(5).refund().status()).isEqualTo("SUCCEEDED");
        // only the fresh refund was claimed: its attempt counted, its lease taken
        assertThat(fx.refund(fresh.refundId()).getInteger("attempts")).isEqualTo(1);
        assertThat(fx.count(
                        "SELECT count(*) FROM refunds WHERE id = $1 AND next_attempt_at > now() + interval '50 minutes'",
                        fresh.refundId()))
                .isEqualTo(1);
        for (RefundRequested other : List.of(appliedBefore, leased, disagreeing)) {
            assertThat(fx.refund(other.refundId()).getInteger("attempts")).isZero();
        }
        assertThat(fx.count(
                        "SELECT count(*) FROM refunds WHERE id = $1 AND next_attempt_at IS NULL",
                        disagreeing.refundId()))
                .isEqualTo(1);
    }

    /** One statement of mixed rows answers each in its order, and changes only what each answer says. */
    @Test
    void aStatementAnswersEachSettlementInOrder() {
        UUID succeeding = pendingRefund("tok_visa", 100);
        UUID appliedBefore = pendingRefund("tok_visa", 200);
        UUID alreadyFinal = pendingRefund("tok_visa", 300);
        UUID declined = pendingRefund("tok_visa", 400);
        ByEvent replayed = success(appliedBefore);
        fx.query(
                "INSERT INTO consumed_events (consumer, event_id) VALUES ($1, $2)",
                config.consumerName(),
                replayed.eventId());
        assertThat(RefundSettlement.settleOnce(pool, config.consumerName(), List.of(success(alreadyFinal)))
                        .await()
                        .atMost(Fixtures.WAIT))
                .containsExactly(Settled.SETTLED);
        ByEvent late = success(alreadyFinal);
        ByEvent decline = new ByEvent(
                new RefundSettlement(declined, "FAILED", null, "psp_refund_failed", "test", Map.of()),
                UUID.randomUUID());

        List<Settled> answers = RefundSettlement.settleOnce(
                        pool, config.consumerName(), List.of(success(succeeding), replayed, late, decline))
                .await()
                .atMost(Fixtures.WAIT);

        assertThat(answers)
                .containsExactly(Settled.SETTLED, Settled.EVENT_APPLIED_BEFORE, Settled.NOT_PENDING, Settled.SETTLED);
        assertThat(fx.status(succeeding)).isEqualTo("SUCCEEDED");
        assertThat(fx.status(appliedBefore)).isEqualTo("PENDING");
        assertThat(fx.status(alreadyFinal)).isEqualTo("SUCCEEDED");
        assertThat(fx.status(declined)).isEqualTo("FAILED");
        assertThat(ledgerTransactions(succeeding)).isEqualTo(1);
        assertThat(ledgerTransactions(appliedBefore)).isZero();
        assertThat(ledgerTransactions(alreadyFinal)).isEqualTo(1);
        assertThat(ledgerTransactions(declined)).isZero();
        assertThat(refundedAmountOf(declined)).isZero();
        // the event of a refund found final is recorded as applied, as the single statement did
        assertThat(consumed(late.eventId())).isEqualTo(1);
        assertThat(consumed(decline.eventId())).isEqualTo(1);
    }

    /**
     * A batch with a row PostgreSQL rejects is run again one settlement at a time: only that call fails. A second
     * delivery of one command never joins its first one's statement.
     */
    @Test
    void aBatchPostgresRejectsIsRunAgainOneSettlementAtATime() {
        List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> release = new CompletableFuture<>();
        AtomicBoolean first = new AtomicBoolean(true);
        StatementBatcher<ByEvent, Settled> batcher = new StatementBatcher<>(
                batch -> {
                    Uni<List<Settled>> settle = RefundSettlement.settleOnce(pool, config.consumerName(), batch);
                    // the first statement waits, so that the next calls queue and go as one
                    return first.getAndSet(false)
                            ? Uni.createFrom().completionStage(release).flatMap(v -> settle)
                            : settle;
                },
                32,
                1,
                sizes::add,
                null,
                byEvent -> byEvent.settlement().refundId());
        ByEvent alone = success(pendingRefund("tok_visa", 100));
        ByEvent good1 = success(pendingRefund("tok_visa", 200));
        // settle_refund raises for a status other than SUCCEEDED or FAILED: PostgreSQL rejects the statement
        UUID rejectedRefund = pendingRefund("tok_visa", 300);
        ByEvent rejected = new ByEvent(
                new RefundSettlement(rejectedRefund, "REVERSED", null, null, "test", Map.of()), UUID.randomUUID());
        ByEvent good2 = new ByEvent(
                new RefundSettlement(
                        pendingRefund("tok_visa", 400), "FAILED", null, "psp_refund_failed", "test", Map.of()),
                UUID.randomUUID());
        ByEvent redelivered = good1;

        CompletableFuture<Settled> aloneAnswer = batcher.submit(alone).subscribeAsCompletionStage();
        List<CompletableFuture<Settled>> queued = List.of(good1, rejected, good2, redelivered).stream()
                .map(s -> batcher.submit(s).subscribeAsCompletionStage())
                .toList();
        release.complete(null);

        assertThat(aloneAnswer.join()).isEqualTo(Settled.SETTLED);
        assertThat(queued.get(0).join()).isEqualTo(Settled.SETTLED);
        assertThat(queued.get(1))
                .failsWithin(Fixtures.WAIT)
                .withThrowableOfType(Exception.class)
                .havingCause()
                .isInstanceOf(PgException.class);
        assertThat(queued.get(2).join()).isEqualTo(Settled.SETTLED);
        assertThat(queued.get(3).join()).isEqualTo(Settled.EVENT_APPLIED_BEFORE);
        // alone; good1, rejected and good2 together, rejected by PostgreSQL; each again alone; the redelivery
        assertThat(sizes).containsExactly(1, 3, 1, 1, 1, 1);

        assertThat(fx.status(alone.settlement().refundId())).isEqualTo("SUCCEEDED");
        assertThat(fx.status(good1.settlement().refundId())).isEqualTo("SUCCEEDED");
        assertThat(ledgerTransactions(good1.settlement().refundId())).isEqualTo(1);
        assertThat(consumed(good1.eventId())).isEqualTo(1);
        assertThat(fx.status(good2.settlement().refundId())).isEqualTo("FAILED");
        assertThat(refundedAmountOf(good2.settlement().refundId())).isZero();
        assertThat(fx.status(rejectedRefund)).isEqualTo("PENDING");
        assertThat(refundedAmountOf(rejectedRefund)).isEqualTo(300);
        assertThat(consumed(rejected.eventId())).isZero();
    }

    /**
     * A PENDING refund of a new payment, under a lease of an hour so that neither the consumer nor the sync of the
     * running application touches it.
     */
    private UUID pendingRefund(String source, long amount) {
        UUID refund = fx.reserve(fx.capture(source, 1_000), amount);
        fx.query("UPDATE refunds SET next_attempt_at = now() + interval '1 hour' WHERE id = $1", refund);
        return refund;
    }

    private static ByEvent success(UUID refund) {
        return new ByEvent(
                new RefundSettlement(refund, "SUCCEEDED", "re_" + refund, null, "test", Map.of()), UUID.randomUUID());
    }

    private long ledgerTransactions(UUID refund) {
        return fx.count(
                "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1", refund.toString());
    }

    private long refundedAmountOf(UUID refund) {
        return fx.count(
                "SELECT p.refunded_amount FROM payments p JOIN refunds r ON r.payment_id = p.id WHERE r.id = $1",
                refund);
    }

    private long consumed(UUID eventId) {
        return fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", eventId);
    }

    /** Outcomes run so far beyond one per statement: grows only when a statement carries several. */
    private double rowsPerStatementOverOne() {
        DistributionSummary sizes = registry.find("refunds.outcome.batch.size").summary();
        return sizes == null ? 0 : sizes.totalAmount() - sizes.count();
    }

    /** Claims run so far beyond one per statement: grows only when a statement carries several. */
    private double claimsPerStatementOverOne() {
        DistributionSummary sizes = registry.find("refunds.claim.batch.size").summary();
        return sizes == null ? 0 : sizes.totalAmount() - sizes.count();
    }

    /** One refund reserved on each of {@code PAYMENTS} new payments, and its command. */
    private List<RefundRequested> commandsOfOtherPayments() {
        List<RefundRequested> commands = new ArrayList<>();
        for (int i = 0; i < PAYMENTS; i++) {
            Fixtures.Captured payment = fx.capture("tok_visa", 5_000);
            commands.add(fx.command(payment, fx.reserve(payment, 500 + i), 500 + i));
        }
        return commands;
    }

    /**
     * Runs {@code lockSql} (a {@code FOR UPDATE} of one row) in a transaction that stays open until {@code release}
     * completes; returns once the lock is held, with the transaction's end.
     */
    private CompletableFuture<Void> holdUntil(CompletableFuture<Void> release, String lockSql, Object key)
            throws Exception {
        CompletableFuture<Void> locked = new CompletableFuture<>();
        CompletableFuture<Void> lockHolder = pool.withTransaction(conn -> conn.preparedQuery(lockSql)
                        .execute(Tuple.of(key))
                        .invoke(() -> locked.complete(null))
                        .chain(() -> Uni.createFrom().completionStage(release)))
                .subscribeAsCompletionStage();
        locked.get(Fixtures.WAIT.toSeconds(), TimeUnit.SECONDS);
        return lockHolder;
    }
}
