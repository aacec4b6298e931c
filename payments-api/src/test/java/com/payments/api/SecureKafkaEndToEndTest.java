package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.infra.QuarkusProcess;
import com.payments.infra.SecureKafka;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kafka security (issue 21): the packaged outbox-relay and refunds-worker, configured only through the standard
 * {@code kafka.*} client settings, publish and consume a refund through a broker whose only client listener is
 * SASL_SSL with SCRAM-SHA-512, each logged in as its own user with the ACLs of its KafkaUser in the strimzi-cnpg
 * overlay (k8s/overlays/strimzi-cnpg/data/kafka-users.yaml) and nothing more.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspSandboxTestResource.class, scope = TestResourceScope.GLOBAL)
class SecureKafkaEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<String> TOPICS = List.of("refund-commands", "refund-commands-dlq", "payment-events");
    private static final List<QuarkusProcess> PROCESSES = new ArrayList<>();
    private static SecureKafka kafka;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String reactiveUrl;

    @ConfigProperty(name = "quarkus.datasource.username")
    String user;

    @ConfigProperty(name = "quarkus.datasource.password")
    Optional<String> password;

    @BeforeEach
    void startBrokerRelayAndWorker() throws Exception {
        TestSupport.warmUp(pspUrl, breakers);
        synchronized (PROCESSES) {
            if (kafka != null) {
                return;
            }
            SecureKafka broker = SecureKafka.start();
            try {
                start(broker);
            } catch (Exception e) {
                PROCESSES.forEach(QuarkusProcess::stop);
                PROCESSES.clear();
                broker.close();
                throw e;
            }
            kafka = broker;
        }
    }

    private void start(SecureKafka broker) throws Exception {
        try (Admin admin = broker.admin()) {
            admin.createTopics(TOPICS.stream()
                            .map(t -> new NewTopic(t, 4, (short) 1))
                            .toList())
                    .all()
                    .get(60, TimeUnit.SECONDS);
        }
        // The ACLs of k8s/overlays/strimzi-cnpg/data/kafka-users.yaml.
        broker.addUser("outbox-relay", "relay-secret");
        broker.allow("outbox-relay", ResourceType.TOPIC, "payment-events", AclOperation.WRITE, AclOperation.DESCRIBE);
        broker.allow("outbox-relay", ResourceType.TOPIC, "refund-commands", AclOperation.WRITE, AclOperation.DESCRIBE);
        broker.addUser("refunds-worker", "worker-secret");
        broker.allow("refunds-worker", ResourceType.TOPIC, "refund-commands", AclOperation.READ, AclOperation.DESCRIBE);
        broker.allow("refunds-worker", ResourceType.GROUP, "refunds-worker", AclOperation.READ);
        broker.allow(
                "refunds-worker", ResourceType.TOPIC, "refund-commands-dlq", AclOperation.WRITE, AclOperation.DESCRIBE);
        broker.addUser("reader", "reader-secret");
        broker.allow("reader", ResourceType.TOPIC, "payment-events", AclOperation.READ, AclOperation.DESCRIBE);

        Map<String, String> common = new HashMap<>(Map.of(
                "quarkus.datasource.reactive.url",
                reactiveUrl,
                "quarkus.datasource.username",
                user,
                "quarkus.datasource.password",
                password.orElse(""),
                "quarkus.log.level",
                "WARN"));
        Map<String, String> relay = new HashMap<>(common);
        broker.clientSettings("outbox-relay", "relay-secret").forEach((k, v) -> relay.put("kafka." + k, v));
        PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", relay));
        Map<String, String> worker = new HashMap<>(common);
        broker.clientSettings("refunds-worker", "worker-secret").forEach((k, v) -> worker.put("kafka." + k, v));
        worker.put("psp.url", pspUrl);
        PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
    }

    @AfterAll
    static void stopAll() {
        PROCESSES.forEach(QuarkusProcess::stop);
        PROCESSES.clear();
        if (kafka != null) {
            kafka.close();
            kafka = null;
        }
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
