package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import com.payments.infra.SecureKafka;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Kafka security: the packaged outbox-relay and refunds-worker, configured only through the standard {@code kafka.*}
 * client settings, publish and consume a refund through a broker whose only client listener is SASL_SSL with
 * SCRAM-SHA-512, each logged in as its own user with the ACLs of its KafkaUser in the strimzi-cnpg overlay
 * (k8s/overlays/strimzi-cnpg/data/kafka-users.yaml) and nothing more. payments-api (a process too) never talks to the
 * broker.
 */
class SecureKafkaEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<String> TOPICS = List.of("refund-commands", "refund-commands-dlq", "payment-events");
    private static final List<AutoCloseable> PROCESSES = new ArrayList<>();
    private static SecureKafka kafka;

    @BeforeAll
    static void startBrokerAndServices() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("securekafka");
        PspSandbox psp = PspSandbox.start(Map.of());
        PROCESSES.add(psp);
        QuarkusProcess api = Stack.paymentsApi(db, psp.url(), Map.of());
        PROCESSES.add(api);
        Merchant.use(api);
        kafka = SecureKafka.start();
        PROCESSES.add(kafka);
        try (Admin admin = kafka.admin()) {
            admin.createTopics(TOPICS.stream()
                            .map(t -> new NewTopic(t, 4, (short) 1))
                            .toList())
                    .all()
                    .get(60, TimeUnit.SECONDS);
        }
        // The ACLs of k8s/overlays/strimzi-cnpg/data/kafka-users.yaml.
        kafka.addUser("outbox-relay", "relay-secret");
        kafka.allow("outbox-relay", ResourceType.TOPIC, "payment-events", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.allow("outbox-relay", ResourceType.TOPIC, "refund-commands", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.addUser("refunds-worker", "worker-secret");
        kafka.allow("refunds-worker", ResourceType.TOPIC, "refund-commands", AclOperation.READ, AclOperation.DESCRIBE);
        kafka.allow("refunds-worker", ResourceType.GROUP, "refunds-worker", AclOperation.READ);
        kafka.allow(
                "refunds-worker", ResourceType.TOPIC, "refund-commands-dlq", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.addUser("reader", "reader-secret");
        kafka.allow("reader", ResourceType.TOPIC, "payment-events", AclOperation.READ, AclOperation.DESCRIBE);

        Map<String, String> common = new HashMap<>(Stack.datasource(db));
        common.put("quarkus.log.level", "WARN");
        Map<String, String> relay = new HashMap<>(common);
        kafka.clientSettings("outbox-relay", "relay-secret").forEach((k, v) -> relay.put("kafka." + k, v));
        PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", relay));
        Map<String, String> worker = new HashMap<>(common);
        kafka.clientSettings("refunds-worker", "worker-secret").forEach((k, v) -> worker.put("kafka." + k, v));
        worker.put("psp.url", psp.url());
        PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
        Merchant.warmUp(psp.url());
    }

    @AfterAll
    static void stopAll() throws Exception {
        Stack.stopAll(PROCESSES);
        kafka = null;
    }

    @Test
    void refundTravelsThroughTheSaslSslBroker() {
        Response captured = capture(KEY_A, unique("key"), body(unique("order"), 10_000, "EUR", "tok_visa"));
        captured.then().statusCode(201);
        UUID paymentId = UUID.fromString(captured.path("id"));
        Response refund = merchant(KEY_A)
                .header("Idempotency-Key", unique("r"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":2500}")
                .post("/v1/payments/" + paymentId + "/refunds");
        refund.then().statusCode(202);
        UUID refundId = UUID.fromString(refund.path("refundId"));

        // relay -> refund-commands -> worker -> PSP -> outbox -> relay -> payment-events, all over SASL_SSL
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(KEY_A).get("/v1/refunds/" + refundId).path("status"), "SUCCEEDED"::equals);
        assertThat(eventsOf(paymentId)).contains("PaymentCaptured", "RefundSucceeded");
    }

    @Test
    void wrongPasswordIsRefused() {
        Map<String, Object> settings = new HashMap<>(kafka.clientSettings("reader", "not-the-password"));
        try (Admin admin = Admin.create(settings)) {
            assertThatThrownBy(() -> admin.listTopics().names().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(SaslAuthenticationException.class);
        }
    }

    /** The event types on payment-events for this payment, read as the ACL-limited user {@code reader}. */
    private static List<String> eventsOf(UUID paymentId) {
        Map<String, Object> config = new HashMap<>(kafka.clientSettings("reader", "reader-secret"));
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<String> found = new ArrayList<>();
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
                        if (paymentId.toString().equals(r.key())) {
                            found.add(new JsonObject(r.value()).getString("type"));
                        }
                    }
                }
                return found.contains("RefundSucceeded");
            });
        }
        return found;
    }
}
