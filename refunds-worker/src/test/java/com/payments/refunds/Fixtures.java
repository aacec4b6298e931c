package com.payments.refunds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.Topics;
import com.payments.contracts.events.RefundRequested;
import com.payments.infra.Kafka;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import io.quarkus.arc.Arc;
import io.restassured.http.ContentType;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Test set-up against the real systems: a payment captured at the sandbox over HTTP and stored CAPTURED, refunds
 * reserved the way payments-api reserves them, commands published to the real broker, sandbox counters.
 */
final class Fixtures {
    static final Duration WAIT = Duration.ofSeconds(30);

    /** A captured payment: ours and the sandbox's charge. */
    record Captured(UUID merchantId, UUID paymentId, String charge, long amount) {}

    private final Pool pool;
    private final ObjectMapper mapper;
    private final String pspUrl;

    Fixtures(Pool pool, ObjectMapper mapper, String pspUrl) {
        this.pool = pool;
        this.mapper = mapper;
        this.pspUrl = pspUrl;
    }

    /** The fixtures of the running application: its pool and ObjectMapper, and the sandbox's URL. */
    static Fixtures current() {
        return new Fixtures(
                Arc.container().instance(Pool.class).get(),
                Arc.container().instance(ObjectMapper.class).get(),
                ConfigProvider.getConfig().getValue("psp.url", String.class));
    }

    /**
     * Charges {@code source} through the service's {@link PspPort} (the adapter of {@code psp.provider}: payment id as
     * key and reference, as payments-api charges) and stores the payment CAPTURED with the PSP's charge id.
     */
    Captured capture(String source, long amount) {
        UUID paymentId = UUID.randomUUID();
        ChargeResult charged = Arc.container()
                .instance(PspPort.class)
                .get()
                .charge(new ChargeRequest(paymentId.toString(), amount, "EUR", source))
                .await()
                .atMost(WAIT);
        assertThat(charged.status()).as(source).isEqualTo(ChargeResult.Status.CAPTURED);
        return store(paymentId, source, charged.pspChargeId(), amount);
    }

    /**
     * Charges {@code paymentMethod} at the sandbox's Stripe mode as the Stripe adapter does (a PaymentIntent with our
     * payment id in its metadata) and stores the payment CAPTURED with the PaymentIntent as its PSP reference.
     */
    Captured captureAtStripe(String apiKey, String paymentMethod, long amount) {
        UUID paymentId = UUID.randomUUID();
        String intent = given().baseUri(pspUrl + "/stripe")
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", paymentId.toString())
                .contentType(ContentType.URLENC)
                .formParam("amount", amount)
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method", paymentMethod)
                .formParam("metadata[payment_id]", paymentId.toString())
                .post("/v1/payment_intents")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
        return store(paymentId, paymentMethod, intent, amount);
    }

    private Captured store(UUID paymentId, String source, String charge, long amount) {
        UUID merchantId = one("INSERT INTO merchants (name) VALUES ('refund tests') RETURNING id", Tuple.tuple())
                .getUUID("id");
        one(
                """
                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, psp_reference,
                                      captured_at)
                VALUES ($1, $2, $6, $3, 'EUR', $4, 'CAPTURED', $5, now()) RETURNING id""",
                Tuple.from(List.of(paymentId, merchantId, amount, source, charge, "order-" + paymentId)));
        return new Captured(merchantId, paymentId, charge, amount);
    }

    /** Reserves and creates a PENDING refund as payments-api does (one transaction, guarded reservation). */
    UUID reserve(Captured payment, long amount) {
        return reserve(payment, amount, Duration.ZERO);
    }

    /** Same, with the refund created {@code age} ago (a refund left behind). */
    UUID reserve(Captured payment, long amount, Duration age) {
        return pool.withTransaction(conn -> conn.preparedQuery(
                                """
                                UPDATE payments SET refunded_amount = refunded_amount + $2
                                 WHERE id = $1 AND status = 'CAPTURED' AND refunded_amount + $2 <= amount""")
                        .execute(Tuple.of(payment.paymentId(), amount))
                        .invoke(rows ->
                                assertThat(rows.rowCount()).as("reservation").isEqualTo(1))
                        .chain(() -> conn.preparedQuery(
                                        """
                                        INSERT INTO refunds (payment_id, merchant_id, amount, currency, created_at)
                                        VALUES ($1, $2, $3, 'EUR', now() - interval '1 millisecond' * $4::bigint)
                                        RETURNING id""")
                                .execute(Tuple.of(payment.paymentId(), payment.merchantId(), amount, age.toMillis())))
                        .map(rows -> rows.iterator().next().getUUID("id")))
                .await()
                .atMost(WAIT);
    }

    RefundRequested command(Captured payment, UUID refundId, long amount) {
        return RefundRequested.of(
                refundId, payment.paymentId(), payment.merchantId(), amount, "EUR", payment.charge(), Map.of());
    }

    String json(Object value) {
        try {
            return mapper.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Publishes raw values to {@code refund-commands} in this order, all with one key (so one partition). */
    void publish(String key, String... values) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of("bootstrap.servers", Kafka.bootstrapServers(), "acks", "all"),
                new StringSerializer(),
                new StringSerializer())) {
            for (String value : values) {
                producer.send(new ProducerRecord<>(Topics.REFUND_COMMANDS, key, value))
                        .get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    void publish(RefundRequested... commands) {
        String[] values = new String[commands.length];
        for (int i = 0; i < commands.length; i++) {
            values[i] = json(commands[i]);
        }
        publish(commands[0].paymentId().toString(), values);
    }

    /** A consumer of the dead-letter topic from its beginning; the caller closes it. */
    KafkaConsumer<String, String> deadLetterConsumer() {
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                Map.of(
                        "bootstrap.servers",
                        Kafka.bootstrapServers(),
                        "group.id",
                        "dlq-test-" + UUID.randomUUID(),
                        "auto.offset.reset",
                        "earliest",
                        "metadata.max.age.ms",
                        "500"),
                new StringDeserializer(),
                new StringDeserializer());
        consumer.subscribe(List.of(Topics.REFUND_COMMANDS_DLQ));
        return consumer;
    }

    static List<ConsumerRecord<String, String>> poll(KafkaConsumer<String, String> consumer) {
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        consumer.poll(Duration.ofMillis(500)).forEach(records::add);
        return records;
    }

    // ---------------------------------------------------------------- reads

    Row refund(UUID refundId) {
        return one("SELECT * FROM refunds WHERE id = $1", Tuple.of(refundId));
    }

    String status(UUID refundId) {
        return refund(refundId).getString("status");
    }

    long refundedAmount(UUID paymentId) {
        return one("SELECT refunded_amount FROM payments WHERE id = $1", Tuple.of(paymentId))
                .getLong(0);
    }

    /** Sandbox counters of a reference: refund requests received and refunds made. */
    int pspRefundRequests(UUID refundId) {
        return given().baseUri(pspUrl)
                .get("/test/counters/" + refundId)
                .then()
                .statusCode(200)
                .extract()
                .path("refundRequests");
    }

    int pspRefundMovements(UUID refundId) {
        return given().baseUri(pspUrl)
                .get("/test/counters/" + refundId)
                .then()
                .statusCode(200)
                .extract()
                .path("refundMovements");
    }

    void pspFaults(String json) {
        given().baseUri(pspUrl)
                .contentType(ContentType.JSON)
                .body(json)
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    void resetPspFaults() {
        given().baseUri(pspUrl).delete("/test/faults").then().statusCode(200);
    }

    long count(String sql, Object... params) {
        return one(sql, Tuple.from(params)).getLong(0);
    }

    RowSet<Row> query(String sql, Object... params) {
        return pool.preparedQuery(sql).execute(Tuple.from(params)).await().atMost(WAIT);
    }

    Row one(String sql, Tuple params) {
        RowSet<Row> rows = pool.preparedQuery(sql).execute(params).await().atMost(WAIT);
        assertThat(rows.size()).as(sql).isEqualTo(1);
        return rows.iterator().next();
    }
}
