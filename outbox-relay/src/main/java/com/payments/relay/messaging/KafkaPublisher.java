package com.payments.relay.messaging;

import com.payments.relay.OutboxRow;
import com.payments.relay.config.RelayConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes outbox rows with a plain idempotent Kafka producer ({@code acks=all}) and waits for the broker's
 * acknowledgement of each. Called from the relay's own thread only, never from an event loop: it blocks.
 *
 * <p>Each record gets a producer span, a child of the trace context its writer stored in the row's {@code headers}
 * (the merchant's request, a refund's outcome, a reconciliation run), ended at the broker's acknowledgement; the
 * record's {@code traceparent}/{@code tracestate} headers carry the producer span on to the consumer. With tracing
 * off, the stored headers are copied as they are.
 */
public final class KafkaPublisher implements AutoCloseable {
    /** Kafka header carrying the outbox {@code event_id}. */
    public static final String EVENT_ID_HEADER = "event-id";
    /** Kafka header carrying the outbox {@code event_type}. */
    public static final String EVENT_TYPE_HEADER = "event-type";

    /** Which rows the broker acknowledged (in publish order) and the first failure, if any. */
    public record Result(List<Long> acknowledged, Exception failure) {}

    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "outbox-relay-watchdog");
        thread.setDaemon(true);
        return thread;
    });

    private static final TextMapGetter<JsonObject> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(JsonObject carrier) {
            return carrier.fieldNames();
        }

        @Override
        public String get(JsonObject carrier, String key) {
            return carrier != null && carrier.getValue(key) instanceof String value ? value : null;
        }
    };

    private final Map<String, Object> producerConfig;
    private final Duration ackDeadline;
    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private KafkaProducer<String, byte[]> producer;

    /** Prefixes of the client settings taken from {@code kafka.*}: the connection's security (TLS, SASL). */
    static final List<String> PASSED_PREFIXES = List.of("security.", "sasl.", "ssl.");

    public KafkaPublisher(String bootstrapServers, RelayConfig.Producer config, OpenTelemetry openTelemetry) {
        this(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers), config, openTelemetry);
    }

    /**
     * @param kafka the application's {@code kafka.*} settings (Quarkus' {@code default-kafka-broker} map, keys without
     *     the prefix): {@code bootstrap.servers} and the security settings ({@link #PASSED_PREFIXES}) are used, any
     *     other key is ignored, so that the delivery guarantees below cannot be changed by configuration.
     */
    public KafkaPublisher(Map<String, ?> kafka, RelayConfig.Producer config, OpenTelemetry openTelemetry) {
        this.producerConfig = producerConfig(kafka, config);
        this.tracer = openTelemetry.getTracer("outbox-relay");
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
        // The producer fails each record after delivery.timeout.ms; this is only the net under that net.
        this.ackDeadline = config.deliveryTimeout().plus(config.requestTimeout());
        this.producer = new KafkaProducer<>(producerConfig);
    }

    static Map<String, Object> producerConfig(Map<String, ?> kafka, RelayConfig.Producer config) {
        Map<String, Object> props = new HashMap<>();
        kafka.forEach((key, value) -> {
            if (PASSED_PREFIXES.stream().anyMatch(key::startsWith)) {
                props.put(key, value);
            }
        });
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG));
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "outbox-relay");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        // At most 5 in flight keeps per-partition order with the idempotent producer, retries included.
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        props.put(ProducerConfig.LINGER_MS_CONFIG, (int) config.linger().toMillis());
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int)
                config.deliveryTimeout().toMillis());
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int)
                config.requestTimeout().toMillis());
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, config.maxBlock().toMillis());
        props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return props;
    }

    /**
     * Sends the rows in order and waits for every acknowledgement. A row whose send cannot even be queued stops the
     * batch there, so no later row of the batch overtakes it.
     */
    public synchronized Result publish(List<OutboxRow> rows) {
        if (producer == null) {
            producer = new KafkaProducer<>(producerConfig);
        }
        // Watchdog: seen in the broker-restart test, a send() blocked in the metadata wait far beyond
        // max.block.ms while the broker was down. Closing the producer from another thread ends that wait.
        KafkaProducer<String, byte[]> current = producer;
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(
                () -> current.close(Duration.ZERO), ackDeadline.toMillis() + 1000, TimeUnit.MILLISECONDS);
        try {
            return publish(current, rows);
        } finally {
            watchdog.cancel(false);
        }
    }

    private Result publish(KafkaProducer<String, byte[]> producer, List<OutboxRow> rows) {
        List<Future<RecordMetadata>> sent = new ArrayList<>(rows.size());
        List<Span> spans = new ArrayList<>(rows.size());
        Exception failure = null;
        for (OutboxRow row : rows) {
            Span span = producerSpan(row);
            try {
                sent.add(producer.send(record(row, span)));
                spans.add(span);
            } catch (RuntimeException e) {
                end(span, e);
                failure = e;
                break;
            }
        }
        List<Long> acknowledged = new ArrayList<>(sent.size());
        long deadline = System.nanoTime() + ackDeadline.toNanos();
        for (int i = 0; i < sent.size(); i++) {
            try {
                sent.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                acknowledged.add(rows.get(i).id());
                end(spans.get(i), null);
            } catch (TimeoutException e) {
                end(spans.get(i), e);
                if (failure == null) {
                    failure = new IllegalStateException("no acknowledgement within " + ackDeadline, e);
                }
            } catch (ExecutionException e) {
                end(spans.get(i), e);
                if (failure == null) {
                    failure = e.getCause() instanceof Exception cause ? cause : e;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                spans.subList(i, spans.size()).forEach(span -> end(span, e));
                if (failure == null) {
                    failure = e;
                }
                break;
            }
        }
        if (failure != null) {
            // Start the next round on a new producer: records of this round still queued in the old one must
            // not reach the broker later, behind the round's retry.
            producer.close(Duration.ZERO);
            this.producer = null;
        }
        return new Result(acknowledged, failure);
    }

    /** A child of the context stored in the row (a new trace when none is stored). */
    private Span producerSpan(OutboxRow row) {
        Context parent =
                row.headers() == null ? Context.root() : propagator.extract(Context.root(), row.headers(), HEADERS);
        return tracer.spanBuilder(row.topic() + " publish")
                .setParent(parent)
                .setSpanKind(SpanKind.PRODUCER)
                .setAttribute("messaging.system", "kafka")
                .setAttribute("messaging.operation", "publish")
                .setAttribute("messaging.destination.name", row.topic())
                .setAttribute("messaging.message.id", row.eventId().toString())
                .setAttribute("messaging.kafka.message.key", row.key())
                .startSpan();
    }

    private static void end(Span span, Exception failure) {
        if (failure != null) {
            span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
        }
        span.end();
    }

    private ProducerRecord<String, byte[]> record(OutboxRow row, Span span) {
        var record = new ProducerRecord<>(row.topic(), row.key(), row.payload().getBytes(StandardCharsets.UTF_8));
        record.headers().add(EVENT_ID_HEADER, row.eventId().toString().getBytes(StandardCharsets.UTF_8));
        record.headers().add(EVENT_TYPE_HEADER, row.eventType().getBytes(StandardCharsets.UTF_8));
        // Any header the writer stored (string values only), its trace context replaced by the producer span's.
        Map<String, String> headers = new LinkedHashMap<>();
        if (row.headers() != null) {
            row.headers().forEach(entry -> {
                if (entry.getValue() instanceof String value) {
                    headers.put(entry.getKey(), value);
                }
            });
        }
        propagator.inject(Context.root().with(span), headers, Map::put);
        headers.forEach((key, value) -> record.headers().add(key, value.getBytes(StandardCharsets.UTF_8)));
        return record;
    }

    @Override
    public synchronized void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }
}
