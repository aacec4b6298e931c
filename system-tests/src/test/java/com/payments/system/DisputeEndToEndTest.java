package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * A Stripe dispute end to end (issue 20): the packaged payments-api with {@code psp.provider=stripe}, psp-sandbox's
 * Stripe mode sending its signed events to payments-api's Stripe route, outbox-relay and the real broker. A charge of
 * {@code pm_card_createDispute} whose answer we never got (the payment is UNKNOWN) is captured by
 * {@code payment_intent.succeeded} and disputed by {@code charge.dispute.created}, sent at once in any order: both
 * reach {@code payment-events} once, {@code PaymentDisputed} with the dispute's fields.
 */
class DisputeEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(90);
    private static final String SECRET = "whsec_dispute_e2e";
    private static final UUID MERCHANT_A = UUID.fromString("00000000-0000-4000-8000-00000000000a");

    @Test
    void aStripeDisputeReachesPaymentEventsOnceAsPaymentDisputed() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("dispute");
        String bootstrap = Kafka.bootstrapServers();
        Stack.recreateTopics();
        List<AutoCloseable> processes = new ArrayList<>();
        try {
            // payments-api makes no PSP call here: the sandbox's events are its only PSP traffic
            QuarkusProcess api = Stack.paymentsApi(
                    db,
                    "http://127.0.0.1:9",
                    Map.of(
                            "psp.provider", "stripe",
                            "psp.stripe.api-key", "sk_test_dispute_e2e",
                            "psp.stripe.webhook-secrets", SECRET));
            processes.add(api);
            PspSandbox psp = PspSandbox.start(Map.of(
                    "psp.stripe.webhook-url",
                    api.url() + "/v1/psp/stripe/webhooks",
                    "psp.stripe.webhook-secrets",
                    SECRET));
            processes.add(psp);
            Map<String, String> relay = new HashMap<>(Stack.datasource(db));
            relay.put("kafka.bootstrap.servers", bootstrap);
            relay.put("quarkus.log.level", "WARN");
            processes.add(QuarkusProcess.start("outbox-relay", "256m", relay));

            UUID paymentId = UUID.randomUUID();
            try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                    PreparedStatement insert = sql.prepareStatement(
                            """
                            INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status)
                            VALUES (?, ?, ?, 4200, 'EUR', 'pm_card_createDispute', 'UNKNOWN')""")) {
                insert.setObject(1, paymentId);
                insert.setObject(2, MERCHANT_A);
                insert.setString(3, "order-" + paymentId);
                insert.executeUpdate();
            }
            Merchant.psp(psp.url())
                    .header("Authorization", "Bearer sk_test_dispute_e2e")
                    .header("Idempotency-Key", paymentId.toString())
                    .contentType("application/x-www-form-urlencoded")
                    .formParam("amount", 4200)
                    .formParam("currency", "eur")
                    .formParam("confirm", "true")
                    .formParam("payment_method", "pm_card_createDispute")
                    .formParam("metadata[payment_id]", paymentId.toString())
                    .post("/stripe/v1/payment_intents")
                    .then()
                    .statusCode(200);

            JsonObject disputed = awaitEvent(bootstrap, paymentId, "PaymentDisputed");
            JsonObject captured = awaitEvent(bootstrap, paymentId, "PaymentCaptured");
            assertThat(disputed.getString("paymentId")).isEqualTo(paymentId.toString());
            assertThat(disputed.getString("merchantId")).isEqualTo(MERCHANT_A.toString());
            assertThat(disputed.getLong("amount")).isEqualTo(4200);
            assertThat(disputed.getString("currency")).isEqualTo("EUR");
            assertThat(disputed.getString("pspReference"))
                    .startsWith("pi_")
                    .isEqualTo(captured.getString("pspReference"));
            assertThat(disputed.getString("disputeId")).startsWith("dp_");
            assertThat(disputed.getString("reason")).isEqualTo("fraudulent");
            try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                    PreparedStatement query = sql.prepareStatement(
                            """
                            SELECT count(*) FROM operations_queue
                             WHERE subject_type = 'payment' AND subject_id = ? AND reason = 'payment_disputed'
                               AND details ->> 'disputeId' = ?""")) {
                query.setString(1, paymentId.toString());
                query.setString(2, disputed.getString("disputeId"));
                try (ResultSet rows = query.executeQuery()) {
                    rows.next();
                    assertThat(rows.getLong(1)).isEqualTo(1);
                }
            }
        } finally {
            Stack.stopAll(processes);
        }
    }

    /** Waits until {@code payment-events} holds exactly one event of this type for the payment, and returns it. */
    private static JsonObject awaitEvent(String bootstrap, UUID paymentId, String type) {
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
                return !found.isEmpty();
            });
        }
        assertThat(found).as(type + " on payment-events").hasSize(1);
        return found.get(0);
    }
}
