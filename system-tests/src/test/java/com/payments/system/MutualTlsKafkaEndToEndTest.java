package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.text;
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
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Kafka security with client certificates: the packaged outbox-relay and refunds-worker, configured only through the
 * standard {@code kafka.*} client settings ({@code security.protocol=SSL}, {@code ssl.keystore.*},
 * {@code ssl.truststore.*}), publish, consume and dead-letter refund commands through a broker listener that requires a
 * client certificate ({@code ssl.client.auth=required}), each identified by its certificate's CN under the ACLs of its
 * KafkaUser in the strimzi-cnpg overlay; a client without a certificate is refused. payments-api (a process too) never
 * talks to the broker. The SASL_SSL twin of this test is {@link SecureKafkaEndToEndTest}.
 */
class MutualTlsKafkaEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<String> TOPICS = List.of("refund-commands", "refund-commands-dlq", "payment-events");
    private static final List<AutoCloseable> PROCESSES = new ArrayList<>();
    private static Postgres.Database db;
    private static SecureKafka kafka;

    @BeforeAll
    static void startBrokerAndServices() throws Exception {
        db = Postgres.freshDatabase("mtlskafka");
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
        // The ACLs of k8s/overlays/strimzi-cnpg/data/kafka-users.yaml, for the certificates' CNs.
        kafka.allow("outbox-relay", ResourceType.TOPIC, "payment-events", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.allow("outbox-relay", ResourceType.TOPIC, "refund-commands", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.allow("refunds-worker", ResourceType.TOPIC, "refund-commands", AclOperation.READ, AclOperation.DESCRIBE);
        kafka.allow("refunds-worker", ResourceType.GROUP, "refunds-worker", AclOperation.READ);
        kafka.allow(
                "refunds-worker", ResourceType.TOPIC, "refund-commands-dlq", AclOperation.WRITE, AclOperation.DESCRIBE);
        kafka.allow("reader", ResourceType.TOPIC, "payment-events", AclOperation.READ, AclOperation.DESCRIBE);

        Map<String, String> common = new HashMap<>(Stack.datasource(db));
        common.put("quarkus.log.level", "WARN");
        Map<String, String> relay = new HashMap<>(common);
        kafka.mtlsClientSettings("outbox-relay").forEach((k, v) -> relay.put("kafka." + k, v));
        PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", relay));
        Map<String, String> worker = new HashMap<>(common);
        kafka.mtlsClientSettings("refunds-worker").forEach((k, v) -> worker.put("kafka." + k, v));
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
    void refundTravelsThroughTheMutualTlsBroker() {
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

        // relay -> refund-commands -> worker -> PSP -> outbox -> relay -> payment-events, all over mTLS
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(KEY_A).get("/v1/refunds/" + refundId).path("status"), "SUCCEEDED"::equals);
        assertThat(eventsOf(paymentId)).contains("PaymentCaptured", "RefundSucceeded");
    }

    /** The worker's dead-letter producer goes through the same settings: the poison record reaches the DLQ. */
    @Test
    void poisonCommandIsDeadLetteredOverMutualTls() throws Exception {
        String key = UUID.randomUUID().toString();
        Map<String, Object> producer = new HashMap<>(kafka.mtlsClientSettings("outbox-relay"));
        producer.put("acks", "all");
        try (KafkaProducer<String, String> commands =
                new KafkaProducer<>(producer, new StringSerializer(), new StringSerializer())) {
            commands.send(new ProducerRecord<>("refund-commands", key, "{not json"))
                    .get(60, TimeUnit.SECONDS);
        }
        // refund_dead_letters is written just before the record goes to the DLQ; the DLQ's end offset moves after.
        await().atMost(OUTCOME).pollInterval(Duration.ofMillis(200)).until(() -> deadLetterRecords() > 0);
        assertThat(text(db, "SELECT topic FROM refund_dead_letters WHERE record_key = ?", key))
                .isEqualTo("refund-commands");
        assertThat(text(db, "SELECT reason FROM refund_dead_letters WHERE record_key = ?", key))
                .contains("unparseable");
    }

    @Test
    void clientWithoutCertificateIsRefused() throws Exception {
        Map<String, Object> settings = new HashMap<>(kafka.mtlsWithoutCertificate());
        try (Admin admin = Admin.create(settings)) {
            assertThatThrownBy(() -> admin.listTopics().names().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(SslAuthenticationException.class);
        }
        // The same listener with a certificate of the test CA: the refusal was the missing certificate.
        Map<String, Object> certified = new HashMap<>(kafka.mtlsClientSettings("reader"));
        try (Admin admin = Admin.create(certified)) {
            assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("payment-events");
        }
    }

    /** Records ever written to refund-commands-dlq (the end offsets, read on the admin listener). */
    private static long deadLetterRecords() throws Exception {
        try (Admin admin = kafka.admin()) {
            List<TopicPartition> partitions = admin
                    .describeTopics(List.of("refund-commands-dlq"))
                    .allTopicNames()
                    .get(30, TimeUnit.SECONDS)
                    .get("refund-commands-dlq")
                    .partitions()
                    .stream()
                    .map(p -> new TopicPartition("refund-commands-dlq", p.partition()))
                    .toList();
            Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
            partitions.forEach(p -> latest.put(p, org.apache.kafka.clients.admin.OffsetSpec.latest()));
            return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset())
                    .sum();
        }
    }

    /** The event types on payment-events for this payment, read as the ACL-limited user {@code reader}. */
    private static List<String> eventsOf(UUID paymentId) {
        Map<String, Object> config = new HashMap<>(kafka.mtlsClientSettings("reader"));
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
