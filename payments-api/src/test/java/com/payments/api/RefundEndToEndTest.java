package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.infra.QuarkusProcess;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Refunds end to end: this API, the packaged outbox-relay and refunds-worker as their own processes, the real broker,
 * the real PSP sandbox and one database.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class RefundEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<QuarkusProcess> PROCESSES = new ArrayList<>();

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @ConfigProperty(name = "kafka.bootstrap.servers")
    String bootstrap;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String reactiveUrl;

    @ConfigProperty(name = "quarkus.datasource.username")
    String user;

    @ConfigProperty(name = "quarkus.datasource.password")
    Optional<String> password;

    @BeforeEach
    void startRelayAndWorker() {
        TestSupport.warmUp(pspUrl, breakers);
        synchronized (PROCESSES) {
            if (!PROCESSES.isEmpty()) {
                return;
            }
            createTopics();
            Map<String, String> common = Map.of(
                    "quarkus.datasource.reactive.url", reactiveUrl,
                    "quarkus.datasource.username", user,
                    "quarkus.datasource.password", password.orElse(""),
                    "kafka.bootstrap.servers", bootstrap,
                    "quarkus.log.level", "WARN");
            PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", common));
            Map<String, String> worker = new java.util.HashMap<>(common);
            worker.put("psp.url", pspUrl);
            PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
        }
    }

    /** Topics exist before the worker subscribes, so it need not wait for a metadata refresh to see them. */
    private void createTopics() {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> missing = Stream.of("refund-commands", "payment-events", "refund-commands-dlq")
                    .filter(t -> !existing.contains(t))
                    .map(t -> new NewTopic(t, 4, (short) 1))
                    .toList();
            admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot create the topics", e);
        }
    }

    @AfterAll
    static void stopRelayAndWorker() {
        PROCESSES.forEach(QuarkusProcess::stop);
        PROCESSES.clear();
    }

    @Test
    void refundSucceedsWithOnePspRefundBalancedLedgerAndEvent() {
        UUID paymentId = captured("tok_visa", 10_000);
        UUID refundId = refund(paymentId, 2_500);

        awaitStatus(refundId, "SUCCEEDED");
        assertThat(pspCounters(refundId).getInteger("refundMovements")).isEqualTo(1);
        assertThat(pspCounters(refundId).getInteger("refundRequests")).isEqualTo(1);
        Row ledger = pool.preparedQuery(
                        """
                        SELECT count(*) AS entries, sum(e.amount) AS total,
                               sum(e.amount) FILTER (WHERE e.account = 'merchant_payable') AS payable
                          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'REFUND' AND t.reference = $1""")
                .execute(Tuple.of(refundId.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(ledger.getLong("entries")).isEqualTo(2);
        assertThat(ledger.getLong("total")).isZero();
        assertThat(ledger.getLong("payable")).isEqualTo(2_500);
        assertThat(refundedAmount(paymentId)).isEqualTo(2_500);

        List<JsonObject> events = awaitEvents(paymentId, "RefundSucceeded", 1);
        assertThat(events.get(0).getString("refundId")).isEqualTo(refundId.toString());
        assertThat(events.get(0).getLong("amount")).isEqualTo(2_500);
        assertThat(events.get(0).getString("pspReference")).startsWith("re_");
    }

    @Test
    void declinedRefundIsReleasedOnceEvenWhenItsCommandIsDeliveredTwice() {
        UUID paymentId = captured("tok_refundFails", 10_000);
        UUID first = refund(paymentId, 4_000);
        awaitStatus(first, "FAILED");
        assertThat(refundedAmount(paymentId)).isZero();

        // deliver the first command again through the relay (same event id), then a second refund of 6,000 on the
        // same payment: same key, same partition, so the worker handles the duplicate before the second refund.
        // A second release of 4,000 would leave 2,000 reserved (or make the second release fail its CHECK).
        pool.preparedQuery(
                        "UPDATE outbox SET sent_at = NULL WHERE topic = 'refund-commands' AND payload->>'refundId' = $1")
                .execute(Tuple.of(first.toString()))
                .await()
                .indefinitely();
        UUID second = refund(paymentId, 6_000);
        awaitStatus(second, "FAILED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE topic = 'refund-commands' AND sent_at IS NULL AND key = $1",
                        paymentId.toString()))
                .isZero();
        assertThat(refundedAmount(paymentId)).isZero();
        assertThat(pspCounters(first).getInteger("refundRequests")).isEqualTo(1);
        assertThat(pspCounters(first).getInteger("refundMovements")).isZero();
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1",
                        first.toString()))
                .isZero();
        List<JsonObject> failed = awaitEvents(paymentId, "RefundFailed", 2);
        assertThat(failed.stream().map(e -> e.getString("refundId")).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder(first.toString(), second.toString());
        Response payment = merchant(KEY_A).get("/v1/payments/" + paymentId);
        assertThat(payment.<Integer>path("refundableAmount")).isEqualTo(10_000);
    }

    private UUID captured(String source, long amount) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), amount, "EUR", source));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    private static UUID refund(UUID paymentId, long amount) {
        Response response = merchant(KEY_A)
                .header("Idempotency-Key", unique("r"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + paymentId + "/refunds");
        response.then().statusCode(202);
        return UUID.fromString(response.path("refundId"));
    }

    private static void awaitStatus(UUID refundId, String status) {
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(KEY_A).get("/v1/refunds/" + refundId).path("status"), status::equals);
    }

    private JsonObject pspCounters(UUID reference) {
        return new JsonObject(
                TestSupport.psp(pspUrl).get("/test/counters/" + reference).asString());
    }

    private long refundedAmount(UUID paymentId) {
        return count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paymentId);
    }

    /** Waits until {@code payment-events} holds {@code expected} events of this type for the payment; none more. */
    private List<JsonObject> awaitEvents(UUID paymentId, String type, int expected) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                "false");
        List<JsonObject> found = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            await().atMost(OUTCOME).pollInterval(Duration.ofMillis(200)).until(() -> {
                List<TopicPartition> partitions = consumer.partitionsFor("payment-events").stream()
                        .map(p -> new TopicPartition(p.topic(), p.partition()))
                        .toList();
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                found.clear();
                Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
                while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        JsonObject event = new JsonObject(r.value());
                        if (paymentId.toString().equals(r.key()) && type.equals(event.getString("type"))) {
                            found.add(event);
                        }
                    }
                }
                return found.size() >= expected;
            });
        }
        assertThat(found).hasSize(expected);
        return found;
    }
}
