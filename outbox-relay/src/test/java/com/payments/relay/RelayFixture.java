package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.Postgres;
import com.payments.relay.config.RelayConfig;
import com.payments.relay.messaging.KafkaPublisher;
import com.payments.relay.service.RelayMetrics;
import com.payments.relay.service.RelayService;
import com.payments.relay.service.RelayWorker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Test helpers: stand-alone relay replicas on their own database and broker, and a reader of a whole topic. */
final class RelayFixture {

    private RelayFixture() {}

    /** Relay settings for tests (short timeouts); each with-method returns a changed copy. */
    record TestConfig(
            int batchSize,
            Duration pollInterval,
            Duration retention,
            Duration retentionInterval,
            int retentionBatchSize,
            Duration deliveryTimeout)
            implements RelayConfig {
        static TestConfig defaults() {
            return new TestConfig(
                    500,
                    Duration.ofMillis(200),
                    Duration.ofDays(7),
                    Duration.ofMinutes(1),
                    1000,
                    Duration.ofSeconds(5));
        }

        TestConfig withBatchSize(int size) {
            return new TestConfig(
                    size, pollInterval, retention, retentionInterval, retentionBatchSize, deliveryTimeout);
        }

        TestConfig withPollInterval(Duration interval) {
            return new TestConfig(
                    batchSize, interval, retention, retentionInterval, retentionBatchSize, deliveryTimeout);
        }

        TestConfig withRetention(Duration age, Duration interval, int batch) {
            return new TestConfig(batchSize, pollInterval, age, interval, batch, deliveryTimeout);
        }

        @Override
        public boolean enabled() {
            return true;
        }

        @Override
        public Duration backoffInitial() {
            return Duration.ofMillis(100);
        }

        @Override
        public Duration backoffMax() {
            return Duration.ofSeconds(1);
        }

        @Override
        public Duration statsInterval() {
            return Duration.ofMillis(200);
        }

        @Override
        public Keepalive keepalive() {
            return new Keepalive() {
                @Override
                public Duration idle() {
                    return Duration.ofSeconds(5);
                }

                @Override
                public Duration interval() {
                    return Duration.ofSeconds(2);
                }

                @Override
                public int count() {
                    return 3;
                }

                @Override
                public Duration userTimeout() {
                    return Duration.ofSeconds(10);
                }

                @Override
                public Duration connectionCheckInterval() {
                    return Duration.ofSeconds(1);
                }
            };
        }

        @Override
        public Producer producer() {
            return new Producer() {
                @Override
                public Duration deliveryTimeout() {
                    return deliveryTimeout;
                }

                @Override
                public Duration requestTimeout() {
                    return Duration.ofSeconds(2);
                }

                @Override
                public Duration maxBlock() {
                    return Duration.ofSeconds(2);
                }

                @Override
                public Duration linger() {
                    return Duration.ofMillis(2);
                }
            };
        }
    }

    /** A relay replica of its own: own pool, own control connection, own producer. */
    record Replica(RelayWorker worker, Pool pool, KafkaPublisher publisher, RelayMetrics metrics)
            implements AutoCloseable {
        @Override
        public void close() {
            worker.stop();
            publisher.close();
            pool.closeAndAwait();
        }
    }

    static PgConnectOptions connectOptions(Postgres.Database db) {
        return RelayService.connectOptions(
                db.reactiveUrl(),
                Optional.of(db.user()),
                Optional.of(db.password()),
                TestConfig.defaults().keepalive());
    }

    static Pool pool(Vertx vertx, Postgres.Database db, int size) {
        return Pool.newInstance(PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(size))
                .connectingTo(connectOptions(db))
                .using(vertx.getDelegate())
                .build());
    }

    static Replica replica(String name, Vertx vertx, Postgres.Database db, String bootstrap, RelayConfig config) {
        Pool pool = pool(vertx, db, 4);
        KafkaPublisher publisher = new KafkaPublisher(bootstrap, config.producer(), OpenTelemetry.noop());
        RelayMetrics metrics = new RelayMetrics(new SimpleMeterRegistry());
        RelayWorker worker = new RelayWorker(name, vertx, connectOptions(db), pool, publisher, config, metrics);
        worker.start();
        return new Replica(worker, pool, publisher, metrics);
    }

    /** Inserts {@code count} rows for {@code topic} in one statement; returns their event ids. */
    static List<UUID> insert(Pool pool, String topic, String key, int count) {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(UUID.randomUUID());
        }
        pool.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload)
                        SELECT e, 'PaymentCaptured', $2, $3, jsonb_build_object('eventId', e)
                        FROM unnest($1::uuid[]) AS e""")
                .execute(Tuple.of(ids.toArray(UUID[]::new), topic, key))
                .await()
                .atMost(Duration.ofSeconds(30));
        return ids;
    }

    static long count(Pool pool, String where) {
        return pool.query("SELECT count(*) FROM outbox WHERE " + where)
                .execute()
                .await()
                .atMost(Duration.ofSeconds(30))
                .iterator()
                .next()
                .getLong(0);
    }

    /** Reads {@code topic} from the beginning until it holds {@code distinct} different event ids. */
    static List<ConsumerRecord<String, String>> readAll(String bootstrap, String topic, int distinct, Duration max) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            long deadline = System.nanoTime() + max.toNanos();
            List<TopicPartition> partitions = List.of();
            while (partitions.isEmpty() && System.nanoTime() < deadline) {
                partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5)).stream()
                        .map(p -> new TopicPartition(topic, p.partition()))
                        .toList();
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (seen.size() < distinct && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    records.add(record);
                    seen.add(eventId(record));
                }
            }
            // a little more, to see duplicates or surplus records that arrive right behind
            for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(300))) {
                records.add(record);
                seen.add(eventId(record));
            }
        }
        assertThat(seen).as("distinct event ids on " + topic).hasSize(distinct);
        return records;
    }

    static String eventId(ConsumerRecord<String, String> record) {
        return new String(
                record.headers().lastHeader(KafkaPublisher.EVENT_ID_HEADER).value(), StandardCharsets.UTF_8);
    }
}
