package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundRequested;
import com.payments.contracts.events.RefundSucceeded;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** refund-commands end to end: real broker, real PostgreSQL, the real sandbox process. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class RefundCommandConsumerTest {
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

    /** Health and metrics are on the management interface only (docs/deployment.md). */
    @Test
    void healthAndMetricsAreOnTheManagementPortOnly() {
        int management = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        for (String path : List.of("/q/health/ready", "/q/health/live", "/q/health/started", "/q/metrics")) {
            RestAssured.given().port(management).get(path).then().statusCode(200);
            RestAssured.given().get(path).then().statusCode(404);
        }
    }

    @Test
    void refundSucceedsOnceWithBalancedLedgerAndEvent() throws Exception {
        Fixtures.Captured payment = fx.capture("tok_visa", 10_000);
        UUID refundId = fx.reserve(payment, 2_500);

        fx.publish(fx.command(payment, refundId, 2_500));

        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        Row refund = fx.refund(refundId);
        assertThat(refund.getString("psp_reference")).startsWith("re_");
        assertThat(refund.getOffsetDateTime("completed_at")).isNotNull();
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        // The reservation becomes the succeeded refund: refunded_amount = PENDING + SUCCEEDED refunds.
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(2_500);

        List<String> entries = new ArrayList<>();
        fx.query(
                        """
                        SELECT e.account, e.amount, e.currency FROM ledger_entries e
                          JOIN ledger_transactions t ON t.id = e.transaction_id
                         WHERE t.kind = 'REFUND' AND t.reference = $1 ORDER BY e.account""",
                        refundId.toString())
                .forEach(r -> entries.add(r.getString(0) + " " + r.getLong(1) + " " + r.getString(2)));
        assertThat(entries).containsExactly("merchant_payable 2500 EUR", "psp_receivable -2500 EUR");

        Row event = fx.one(
                "SELECT topic, key, payload FROM outbox WHERE event_type = 'RefundSucceeded' AND payload->>'refundId' = $1",
                io.vertx.mutiny.sqlclient.Tuple.of(refundId.toString()));
        assertThat(event.getString("topic")).isEqualTo("payment-events");
        assertThat(event.getString("key")).isEqualTo(payment.paymentId().toString());
        assertThat(event.getJsonObject("payload").getLong("amount")).isEqualTo(2_500L);
        assertThat(event.getJsonObject("payload").getString("pspReference"))
                .isEqualTo(refund.getString("psp_reference"));
        // settle_refund (V95) writes the event: it reads as the contract's record, with the refund's fields (the same
        // check as payments-api's PspWebhookTest for a refund settled by a webhook)
        RefundSucceeded read = mapper.readValue(event.getJsonObject("payload").encode(), RefundSucceeded.class);
        assertThat(read.eventId()).isNotNull();
        assertThat(read.occurredAt()).isBetween(Instant.now().minusSeconds(60), Instant.now());
        assertThat(read)
                .usingRecursiveComparison()
                .ignoringFields("eventId", "occurredAt")
                .isEqualTo(new RefundSucceeded(
                        null,
                        RefundSucceeded.TYPE,
                        refundId,
                        payment.paymentId(),
                        payment.merchantId(),
                        2_500,
                        "EUR",
                        refund.getString("psp_reference"),
                        null,
                        Map.of()));
        assertThat(fx.one(
                                "SELECT description FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1",
                                io.vertx.mutiny.sqlclient.Tuple.of(refundId.toString()))
                        .getString(0))
                .isEqualTo("refund of payment " + payment.paymentId());
    }

    /**
     * The refund's metadata (issue 24) rides on its RefundSucceeded / RefundFailed event, read from the refund row; a
     * command written before commands carried metadata (no such field) is still executed.
     */
    @Test
    void eventsCarryTheRefundsMetadataAndCommandsWithoutItStillRun() {
        Fixtures.Captured paid = fx.capture("tok_visa", 10_000);
        Fixtures.Captured failing = fx.capture(PspUnderTest.refundFailsSource(), 10_000);
        UUID succeeds = fx.reserve(paid, 1_000);
        UUID fails = fx.reserve(failing, 1_000);
        for (UUID refund : List.of(succeeds, fails)) {
            fx.query("UPDATE refunds SET metadata = '{\"ticket\": \"T-1020\"}'::jsonb WHERE id = $1", refund);
        }
        JsonObject command = new JsonObject(fx.json(fx.command(paid, succeeds, 1_000)));
        command.remove("metadata");
        String old = command.encode();
        assertThat(old).doesNotContain("metadata");
        fx.publish(paid.paymentId().toString(), old);
        fx.publish(fx.command(failing, fails, 1_000));

        await().atMost(Fixtures.WAIT).until(() -> fx.status(succeeds).equals("SUCCEEDED"));
        await().atMost(Fixtures.WAIT).until(() -> fx.status(fails).equals("FAILED"));
        for (String type : List.of("RefundSucceeded", "RefundFailed")) {
            Row event = fx.one(
                    "SELECT payload FROM outbox WHERE event_type = $1 AND payload->>'refundId' IN ($2, $3)",
                    io.vertx.mutiny.sqlclient.Tuple.of(type, succeeds.toString(), fails.toString()));
            assertThat(event.getJsonObject("payload").getJsonObject("metadata").getMap())
                    .as(type)
                    .isEqualTo(Map.of("ticket", "T-1020"));
        }
    }

    @Test
    void declinedRefundReleasesItsReservationOnceWhateverTheRedeliveries() {
        Fixtures.Captured payment = fx.capture(PspUnderTest.refundFailsSource(), 10_000);
        UUID failing = fx.reserve(payment, 3_000);
        UUID sentinel = fx.reserve(payment, 2_000);
        fx.reserve(payment, 4_000); // stays reserved: no command for it
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(9_000);

        RefundRequested command = fx.command(payment, failing, 3_000);
        RefundRequested republished = fx.command(payment, failing, 3_000); // same refund, another event id
        // The same record twice, the same refund under another event id, then a sentinel in the same partition:
        // when the sentinel is done, everything before it has been processed.
        fx.publish(command, command, republished, fx.command(payment, sentinel, 2_000));

        await().atMost(Fixtures.WAIT).until(() -> fx.status(sentinel).equals("FAILED"));
        // Stripe answers such refunds pending; the sync's look-up finds each failed in its own time
        await().atMost(Fixtures.WAIT).until(() -> fx.status(failing).equals("FAILED"));
        assertThat(fx.refund(failing).getString("failure_code")).isEqualTo(PspUnderTest.refundFailureCode());
        // 9,000 reserved - 3,000 - 2,000 released once each; a second release of 3,000 would leave 1,000.
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(4_000);
        assertThat(fx.count(
                        "SELECT count(*) FROM outbox WHERE event_type = 'RefundFailed' AND payload->>'refundId' = $1",
                        failing.toString()))
                .isEqualTo(1);
        assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", command.eventId()))
                .isEqualTo(1);
        // The sandbox fails the refund at once, so the republished command finds it final and is recorded. Stripe
        // answers pending: a command for a PENDING refund whose retry is not due is acknowledged without a record
        // (the refund row says what is left to do; docs/refunds.md), unless the sync finished the refund first.
        assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", republished.eventId()))
                .isBetween(PspUnderTest.stripe() ? 0L : 1L, 1L);
        PspUnderTest.assertSentOnce(fx, pspUrl, payment, failing);
        assertThat(fx.pspRefundMovements(failing)).isZero();
        assertThat(fx.count("SELECT count(*) FROM ledger_transactions WHERE reference = $1", failing.toString()))
                .isZero();
    }

    @Test
    void sameCommandThreeTimesMakesOnePspRefund() {
        Fixtures.Captured payment = fx.capture("tok_mastercard", 5_000);
        UUID refundId = fx.reserve(payment, 5_000 - 1);
        UUID sentinel = fx.reserve(payment, 1);
        RefundRequested command = fx.command(payment, refundId, 5_000 - 1);

        fx.publish(command, command, command, fx.command(payment, sentinel, 1));

        await().atMost(Fixtures.WAIT).until(() -> fx.status(sentinel).equals("SUCCEEDED"));
        assertThat(fx.status(refundId)).isEqualTo("SUCCEEDED");
        assertThat(fx.pspRefundRequests(refundId)).as("PSP calls").isEqualTo(1);
        assertThat(fx.pspRefundMovements(refundId)).as("PSP refunds").isEqualTo(1);
        assertThat(fx.count("SELECT count(*) FROM ledger_transactions WHERE reference = $1", refundId.toString()))
                .isEqualTo(1);
        assertThat(fx.count(
                        "SELECT count(*) FROM outbox WHERE event_type = 'RefundSucceeded' AND payload->>'refundId' = $1",
                        refundId.toString()))
                .isEqualTo(1);
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(5_000);
    }

    @Test
    void poisonRecordsGoToTheDeadLetterTopicAndTheNextRecordIsProcessed() {
        Fixtures.Captured payment = fx.capture("tok_visa", 8_000);
        UUID refundId = fx.reserve(payment, 800);
        String key = payment.paymentId().toString();
        RefundRequested unknownRefund = fx.command(payment, UUID.randomUUID(), 800);

        try (KafkaConsumer<String, String> dlq = fx.deadLetterConsumer()) {
            fx.publish(key, "{not json", fx.json(unknownRefund), fx.json(fx.command(payment, refundId, 800)));

            await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
            List<ConsumerRecord<String, String>> dead = new ArrayList<>();
            await().atMost(Fixtures.WAIT).until(() -> {
                Fixtures.poll(dlq).stream().filter(r -> key.equals(r.key())).forEach(dead::add);
                return dead.size() >= 2;
            });
            assertThat(dead).hasSize(2);
            assertThat(dead.get(0).value()).isEqualTo("{not json");
            assertThat(reason(dead.get(0))).contains("unparseable");
            assertThat(dead.get(1).value()).contains(unknownRefund.eventId().toString());
            assertThat(reason(dead.get(1))).contains("unknown refund " + unknownRefund.refundId());

            // The console's DLQ: each record was recorded before it reached the topic, with the same reason.
            List<String> recorded = new ArrayList<>();
            fx.query(
                            """
                            SELECT topic, refund_id, payment_id, reason FROM refund_dead_letters
                             WHERE record_key = $1 ORDER BY kafka_partition, kafka_offset""",
                            key)
                    .forEach(r -> recorded.add(
                            r.getString(0) + " " + r.getUUID(1) + " " + r.getUUID(2) + " " + r.getString(3)));
            assertThat(recorded)
                    .containsExactly(
                            "refund-commands null null " + reason(dead.get(0)),
                            "refund-commands " + unknownRefund.refundId() + " " + payment.paymentId() + " "
                                    + reason(dead.get(1)));
        }
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
    }

    @Test
    void commandForARefundLeasedByAnotherClaimIsLeftToTheLeaseHolderAndNotLost() {
        Fixtures.Captured payment = fx.capture("tok_visa", 7_000);
        UUID refundId = fx.reserve(payment, 3_000);
        UUID sentinel = fx.reserve(payment, 1_000);
        // As the sync's claim leaves it: one attempt counted, leased while its holder calls the PSP (or has died).
        fx.query(
                "UPDATE refunds SET attempts = 1, next_attempt_at = now() + interval '1 hour' WHERE id = $1", refundId);

        fx.publish(fx.command(payment, refundId, 3_000), fx.command(payment, sentinel, 1_000));

        await().atMost(Fixtures.WAIT).until(() -> fx.status(sentinel).equals("SUCCEEDED"));
        Row leased = fx.refund(refundId);
        assertThat(fx.pspRefundRequests(refundId))
                .as("PSP refund requests while another claim holds the lease")
                .isZero();
        assertThat(leased.getString("status")).isEqualTo("PENDING");
        assertThat(leased.getInteger("attempts")).isEqualTo(1);

        // The holder never finishes: once its lease runs out the sync executes the refund, so the command is not lost.
        fx.query("UPDATE refunds SET next_attempt_at = now() WHERE id = $1", refundId);
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundRequests(refundId)).as("PSP refund requests").isEqualTo(1);
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(fx.count("SELECT count(*) FROM operations_queue WHERE subject_id = $1", refundId.toString()))
                .isZero();
    }

    @Test
    void commandOfAnotherMerchantGoesToTheDeadLetterTopicAndChangesNothing() {
        Fixtures.Captured payment = fx.capture("tok_visa", 5_000);
        UUID otherMerchant = fx.capture("tok_visa", 100).merchantId();
        UUID refundId = fx.reserve(payment, 2_000);
        RefundRequested genuine = fx.command(payment, refundId, 2_000);
        RefundRequested forged = new RefundRequested(
                genuine.eventId(),
                genuine.type(),
                genuine.refundId(),
                genuine.paymentId(),
                otherMerchant,
                genuine.amount(),
                genuine.currency(),
                genuine.pspChargeReference(),
                genuine.occurredAt(),
                genuine.metadata());
        String before = refundRow(refundId);

        try (KafkaConsumer<String, String> dlq = fx.deadLetterConsumer()) {
            fx.publish(forged);

            List<ConsumerRecord<String, String>> dead = new ArrayList<>();
            await().atMost(Fixtures.WAIT).until(() -> {
                Fixtures.poll(dlq).stream()
                        .filter(r -> r.value().contains(forged.eventId().toString()))
                        .forEach(dead::add);
                return !dead.isEmpty();
            });
            assertThat(reason(dead.get(0))).contains("merchantId");
        }
        assertThat(fx.pspRefundRequests(refundId)).as("PSP refund requests").isZero();
        assertThat(refundRow(refundId)).isEqualTo(before);
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(2_000);
        assertThat(fx.count("SELECT count(*) FROM consumed_events WHERE event_id = $1", forged.eventId()))
                .isZero();
    }

    /** The whole refund row, to compare before and after. */
    private String refundRow(UUID refundId) {
        return fx.one(
                        "SELECT to_jsonb(r)::text FROM refunds r WHERE id = $1",
                        io.vertx.mutiny.sqlclient.Tuple.of(refundId))
                .getString(0);
    }

    private static String reason(ConsumerRecord<String, String> record) {
        var header = record.headers().lastHeader("dead-letter-reason");
        assertThat(header).as("dead-letter-reason header").isNotNull();
        return new String(header.value(), StandardCharsets.UTF_8);
    }
}
