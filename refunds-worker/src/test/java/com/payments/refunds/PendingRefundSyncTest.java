package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.refunds.repository.RefundRepository;
import com.payments.refunds.service.ConsumedEventPurge;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Refunds whose command never ran are executed by the sync; one still PENDING at its deadline is escalated. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class PendingRefundSyncTest {
    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @Inject
    ConsumedEventPurge purge;

    @Inject
    RefundRepository refundRepository;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    Fixtures fx;

    @BeforeEach
    void setUp() {
        fx = new Fixtures(pool, mapper, pspUrl);
    }

    @AfterEach
    void resetFaults() {
        fx.resetPspFaults();
    }

    @Test
    void consumedEventIdsPastTheRetentionAreForgottenAndTheOthersKept() {
        UUID old = UUID.randomUUID();
        UUID recent = UUID.randomUUID();
        UUID otherConsumer = UUID.randomUUID();
        pool.query("INSERT INTO consumed_events (consumer, event_id, consumed_at) VALUES "
                        + "('refunds-worker', '" + old + "', now() - interval '15 days'), "
                        + "('refunds-worker', '" + recent + "', now() - interval '13 days'), "
                        + "('another-consumer', '" + otherConsumer + "', now() - interval '30 days')")
                .execute()
                .await()
                .indefinitely();

        assertThat(purge.purgeExpired().await().indefinitely()).isGreaterThanOrEqualTo(1L);

        assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = '" + old + "'"))
                .isZero();
        assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id IN ('" + recent + "', '"
                        + otherConsumer + "')"))
                .isEqualTo(2);
    }

    /**
     * A claim given back by a stopping worker's sync (nothing sent): the refund is due at once, its attempt not
     * counted, and the sync of another worker (here the running one) executes it long before the lease would have
     * ended.
     */
    @Test
    void aClaimGivenBackUnsentIsDueAtOnceAndExecutedBySync() {
        Fixtures.Captured payment = fx.capture("tok_visa", 2_000);
        UUID refundId = fx.reserve(payment, 2_000);
        // as a sync's claim leaves it: one attempt counted, leased for an hour
        fx.query(
                "UPDATE refunds SET attempts = 1, next_attempt_at = now() + interval '1 hour' WHERE id = $1", refundId);

        assertThat(refundRepository.release(pool, refundId).await().atMost(Fixtures.WAIT))
                .isTrue();
        Row released = fx.one(
                "SELECT attempts, next_attempt_at <= now() AS due FROM refunds WHERE id = $1",
                io.vertx.mutiny.sqlclient.Tuple.of(refundId));
        assertThat(released.getInteger("attempts")).isZero();
        assertThat(released.getBoolean("due")).isTrue();

        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(refundRepository.release(pool, refundId).await().atMost(Fixtures.WAIT))
                .as("a final refund is not given back")
                .isFalse();
    }

    @Test
    void refundWhoseCommandWasLostIsExecutedBySync() {
        Fixtures.Captured payment = fx.capture("tok_visa", 4_000);
        UUID refundId = fx.reserve(payment, 4_000, Duration.ofMinutes(30)); // no command published, ever

        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(4_000);
        assertThat(fx.count(
                        "SELECT count(*) FROM outbox WHERE event_type = 'RefundSucceeded' AND payload->>'refundId' = $1",
                        refundId.toString()))
                .isEqualTo(1);
    }

    /**
     * Refunds nobody executed (a worker killed mid-batch, commands lost) at a PSP answering in 0.4 s: the sync's
     * look-up says NOT_FOUND, then it sends the refund, 0.8 s each. One after the other, 30 of them take 24 s, more
     * than twice the test's 10 s lease, so a batch's last refunds could be claimed again while still waiting their
     * turn; they must all end within the lease.
     */
    @Test
    void refundsOfManyPaymentsAreSyncedTogetherWellInsideTheLease() {
        List<Fixtures.Captured> payments = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            payments.add(fx.capture("tok_visa", 1_000));
        }
        fx.pspFaults("{\"latencyFixedMs\": 400}");
        List<UUID> refunds = new ArrayList<>();
        for (Fixtures.Captured payment : payments) {
            refunds.add(fx.reserve(payment, 1_000, Duration.ofMinutes(30)));
        }

        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> refunds.stream().allMatch(id -> fx.status(id).equals("SUCCEEDED")));
        for (UUID refund : refunds) {
            assertThat(fx.pspRefundMovements(refund))
                    .as("money moved for " + refund)
                    .isEqualTo(1);
        }
    }

    @Test
    void refundPendingPastItsDeadlineIsEscalatedStillCompletesAndResolvesItsItem() {
        Fixtures.Captured payment = fx.capture("tok_visa", 9_000);
        fx.pspFaults(PspUnderTest.unavailableFault());
        UUID refundId = fx.reserve(payment, 900, Duration.ofHours(2)); // deadline (10 min in tests) long past

        await().atMost(Fixtures.WAIT)
                .until(() -> fx.count(
                                "SELECT count(*) FROM operations_queue WHERE subject_type = 'refund' AND subject_id = $1",
                                refundId.toString())
                        == 1);
        Row item = fx.one(
                "SELECT reason, status, details FROM operations_queue WHERE subject_id = $1",
                io.vertx.mutiny.sqlclient.Tuple.of(refundId.toString()));
        assertThat(item.getString("reason")).isEqualTo("refund_pending_too_long");
        assertThat(item.getString("status")).isEqualTo("OPEN");
        assertThat(item.getJsonObject("details").getLong("amount")).isEqualTo(900L);
        assertThat(fx.status(refundId)).isEqualTo("PENDING");
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(900);

        // Retries go on after escalation: more attempts, still one open item.
        int attempts = fx.refund(refundId).getInteger("attempts");
        await().atMost(Fixtures.WAIT).until(() -> fx.refund(refundId).getInteger("attempts") > attempts);
        assertThat(fx.count("SELECT count(*) FROM operations_queue WHERE subject_id = $1", refundId.toString()))
                .isEqualTo(1);

        fx.resetPspFaults();
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        // ... and its success answers the item, in the same transaction
        Row resolved = fx.one(
                "SELECT status, resolved_at, details FROM operations_queue WHERE subject_id = $1",
                io.vertx.mutiny.sqlclient.Tuple.of(refundId.toString()));
        assertThat(resolved.getString("status")).isEqualTo("RESOLVED");
        assertThat(resolved.getValue("resolved_at")).isNotNull();
        assertThat(resolved.getJsonObject("details").getString("resolution")).isEqualTo("refunds-worker: SUCCEEDED");
    }
}
