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
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many refunds of one payment behind a slow PSP must not fail the refund-commands channel (SmallRye's
 * {@code TooManyMessagesWithoutAck} once a record waits longer than {@code throttled.unprocessed-record-max-age.ms}),
 * nor hold back the refunds of other payments. The record budget is shortened through config to 10 s and the sandbox
 * answers in 0.7 s: one lane of 30 records would need 21 s, while a lane of the default bound (one running, four
 * waiting) needs about 3.5 s.
 */
@QuarkusTest
@TestProfile(HotPaymentLaneTest.ShortRecordBudget.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class HotPaymentLaneTest {
    private static final long RECORD_BUDGET_MS = 10_000;
    private static final long PSP_LATENCY_MS = 700;
    private static final int HOT_REFUNDS = 30;
    private static final int FIRST_WAVE = 10;
    private static final int SECOND_WAVE = 20;

    public static class ShortRecordBudget implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "mp.messaging.incoming.refund-commands.throttled.unprocessed-record-max-age.ms",
                    String.valueOf(RECORD_BUDGET_MS),
                    // The sync executes nothing it was not handed within the test: the overflow must be handed.
                    "refunds.sync.unscheduled-after",
                    "10m");
        }
    }

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    Fixtures fx;
    ScheduledExecutorService readinessProbe;
    final List<String> notReady = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() {
        fx = new Fixtures(pool, mapper, pspUrl);
        int management = managementPort();
        readinessProbe = Executors.newSingleThreadScheduledExecutor();
        readinessProbe.scheduleWithFixedDelay(
                () -> {
                    Response ready = RestAssured.given().port(management).get("/q/health/ready");
                    if (ready.statusCode() != 200) {
                        notReady.add(Instant.now() + " " + ready.statusCode() + " " + ready.asString());
                    }
                },
                0,
                250,
                TimeUnit.MILLISECONDS);
    }

    @AfterEach
    void tearDown() {
        readinessProbe.shutdownNow();
        fx.resetPspFaults();
    }

    @Test
    void manyRefundsOfOnePaymentBehindASlowPspNeitherFailTheChannelNorStarveOtherPayments() {
        Fixtures.Captured hot = fx.capture("tok_visa", 100_000);
        List<RefundRequested> hotCommands = new ArrayList<>();
        for (int i = 0; i < HOT_REFUNDS; i++) {
            hotCommands.add(fx.command(hot, fx.reserve(hot, 1_000), 1_000));
        }
        List<RefundRequested> firstWave = othersReserved(FIRST_WAVE);
        List<RefundRequested> secondWave = othersReserved(SECOND_WAVE);
        fx.pspFaults("{\"latencyFixedMs\":" + PSP_LATENCY_MS + "}");

        fx.publish(hotCommands.toArray(RefundRequested[]::new));
        Instant hotPublished = Instant.now();
        firstWave.forEach(fx::publish);
        // The second wave comes once a single lane of the hot payment would have outlived the record budget.
        await().pollDelay(Duration.ofMillis(RECORD_BUDGET_MS + 2_000))
                .atMost(Duration.ofMillis(RECORD_BUDGET_MS + 3_000))
                .until(() -> true);
        secondWave.forEach(fx::publish);
        Instant secondWavePublished = Instant.now();

        // Other payments' refunds are not held back: executed by the consumer (their event ids are recorded; the
        // sync records none) within a few PSP round trips of their publication.
        await().atMost(Duration.ofSeconds(15)).until(() -> secondWave.stream()
                .allMatch(c -> fx.status(c.refundId()).equals("SUCCEEDED")));
        assertThat(Duration.between(secondWavePublished, Instant.now()))
                .as("second wave done")
                .isLessThan(Duration.ofSeconds(15));
        List<RefundRequested> others = new ArrayList<>(firstWave);
        others.addAll(secondWave);
        for (RefundRequested command : others) {
            assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", command.eventId()))
                    .as("command of refund " + command.refundId() + " executed by the consumer")
                    .isEqualTo(1);
        }

        List<RefundRequested> all = new ArrayList<>(hotCommands);
        all.addAll(others);
        await().atMost(Duration.ofSeconds(90))
                .until(() -> all.stream().allMatch(c -> fx.status(c.refundId()).equals("SUCCEEDED")));
        for (RefundRequested command : all) {
            assertThat(fx.pspRefundMovements(command.refundId()))
                    .as("PSP refunds of " + command.refundId())
                    .isEqualTo(1);
        }
        assertThat(fx.refundedAmount(hot.paymentId())).isEqualTo(HOT_REFUNDS * 1_000L);
        assertThat(fx.count(
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = ANY($1)",
                        (Object) hotCommands.stream()
                                .map(c -> c.refundId().toString())
                                .toArray(String[]::new)))
                .as("ledger transactions of the hot payment's refunds")
                .isEqualTo(HOT_REFUNDS);
        String metrics =
                RestAssured.given().port(managementPort()).get("/q/metrics").asString();
        assertThat(metrics)
                .as("records handed to the sync")
                .containsPattern("(?m)^refunds_commands_handed_off_total [1-9]");
        assertThat(notReady)
                .as("readiness DOWN after the hot payment's records came at " + hotPublished)
                .isEmpty();
    }

    private static int managementPort() {
        return ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
    }

    /** One payment each, one refund each, reserved. */
    private List<RefundRequested> othersReserved(int count) {
        List<RefundRequested> commands = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Fixtures.Captured payment = fx.capture("tok_visa", 5_000);
            commands.add(fx.command(payment, fx.reserve(payment, 500), 500));
        }
        return commands;
    }
}
