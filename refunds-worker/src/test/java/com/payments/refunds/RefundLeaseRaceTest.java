package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pending-refund sync and a late command execute the same refund at the same time: the first claim takes the
 * lease, and the other one backs off without calling the PSP.
 */
@QuarkusTest
@TestProfile(RefundLeaseRaceTest.SlowPsp.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class RefundLeaseRaceTest {
    private static final long PSP_LATENCY_MS = 5_000;

    /** PSP calls may take longer than the sandbox's latency: the sync's lookup and POST keep the lease ~10 s. */
    public static class SlowPsp implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.fault-tolerance.\"com.payments.refunds.client.PspClient/refund\".timeout.value", "20000",
                    "quarkus.fault-tolerance.\"com.payments.refunds.client.PspClient/lookup\".timeout.value", "20000",
                    "refunds.psp-limit.call-timeout", "19s",
                    "refunds.sync.lease", "60s");
        }
    }

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

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
    void commandArrivingWhileTheSyncSendsTheRefundDoesNotSendItAgain() {
        Fixtures.Captured payment = fx.capture("tok_visa", 6_000);
        fx.pspFaults("{\"latencyFixedMs\": " + PSP_LATENCY_MS + "}");
        // Old enough for the sync to execute it at once: its command comes late (the relay was behind).
        UUID refundId = fx.reserve(payment, 6_000, Duration.ofMinutes(30));
        await().atMost(Fixtures.WAIT).until(() -> fx.refund(refundId).getInteger("attempts") >= 1);

        // The sync holds the lease and waits for the PSP. Now the command comes, followed in its partition by a
        // marker that goes straight to the DLQ: once the marker is there, the command has been handled.
        RefundRequested marker = fx.command(payment, UUID.randomUUID(), 1);
        String statusWhenCommandHandled;
        try (KafkaConsumer<String, String> dlq = fx.deadLetterConsumer()) {
            fx.publish(fx.command(payment, refundId, 6_000), marker);
            await().atMost(Fixtures.WAIT).until(() -> Fixtures.poll(dlq).stream()
                    .anyMatch(r -> r.value().contains(marker.eventId().toString())));
            statusWhenCommandHandled = fx.status(refundId);
        }

        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundRequests(refundId)).as("PSP refund requests").isEqualTo(1);
        assertThat(fx.pspRefundMovements(refundId)).as("PSP refunds").isEqualTo(1);
        assertThat(fx.refund(refundId).getInteger("attempts")).as("claims").isEqualTo(1);
        assertThat(fx.count(
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'refund_rejected_by_psp'",
                        refundId.toString()))
                .isZero();
        assertThat(statusWhenCommandHandled)
                .as("the command was handled while the sync held the lease")
                .isEqualTo("PENDING");
    }
}
