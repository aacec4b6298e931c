package com.payments.relay;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Benchmark (run by bench/relay.sh, not a unit test): the packaged relay as a process against PostgreSQL and
 * Kafka as local-infra resolves them. 1) drain: a backlog of rows, events/s from the first to the last sent_at;
 * 2) delay: rows inserted at a fixed rate, each carrying its insert time, measured when a consumer receives it.
 */
public final class RelayBench {

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        int backlog = Integer.getInteger("bench.backlog", 100_000);
        int rate = Integer.getInteger("bench.rate", 1_000);
        int seconds = Integer.getInteger("bench.seconds", 20);
        Postgres.Database db = Postgres.freshDatabase("relay_bench");
        String bootstrap = Kafka.bootstrapServers();

        String coldTopic = insertBacklog(db, backlog);
        Process relay = startRelay(db, bootstrap);
        try {
            drain(db, coldTopic, backlog, "cold: the relay JVM starts with the backlog waiting");
            // the same again with a warm JVM: the backlog commits at once (one statement) while the relay sleeps
            drain(db, insertBacklog(db, backlog), backlog, "warm");

            delay(db, bootstrap, rate, seconds);
        } finally {
            relay.destroy();
            relay.waitFor();
        }
        System.exit(0);
    }

    /** Inserts {@code backlog} rows of 5,000 keys for a new topic in one statement; returns the topic. */
    private static String insertBacklog(Postgres.Database db, int backlog) throws SQLException {
        String topic = "bench-drain-" + UUID.randomUUID();
        try (Connection sql = connect(db);
                Statement st = sql.createStatement()) {
            st.execute("INSERT INTO outbox (event_id, event_type, topic, key, payload) SELECT gen_random_uuid(),"
                    + " 'PaymentCaptured', '" + topic + "', 'pay-' || (g % 5000),"
                    + " jsonb_build_object('eventId', gen_random_uuid(), 'type', 'PaymentCaptured', 'amount', g)"
                    + " FROM generate_series(1, " + backlog + ") g");
        }
        return topic;
    }

    /** Waits until the topic's rows are sent; prints events/s from their first to their last sent_at. */
    private static void drain(Postgres.Database db, String topic, int backlog, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (count(db, "sent_at IS NULL") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        double seconds = scalar(
                db, "SELECT extract(epoch FROM max(sent_at) - min(sent_at)) FROM outbox WHERE topic = '" + topic + "'");
        System.out.printf(
                "drain (%s): %d events in %.2f s = %.0f events/s (first to last sent_at, one relay instance)%n",
                what, backlog, seconds, backlog / seconds);
    }

    private static void delay(Postgres.Database db, String bootstrap, int rate, int seconds) throws Exception {
        String topic = "bench-delay-" + UUID.randomUUID();
        int total = rate * seconds;
        AtomicLongArray delays = new AtomicLongArray(total);
        AtomicInteger received = new AtomicInteger();
        Thread consumer = new Thread(() -> consume(bootstrap, topic, total, delays, received), "bench-consumer");
        // the topic exists before the clock starts (first metadata round trip is not the relay's delay)
        insertOne(db, topic, -1);
        consumer.start();
        Thread.sleep(2000);

        int threads = 4;
        Thread[] writers = new Thread[threads];
        long start = System.nanoTime();
        for (int w = 0; w < threads; w++) {
            int writer = w;
            writers[w] = new Thread(() -> {
                try (Connection sql = connect(db);
                        PreparedStatement insert = sql.prepareStatement(INSERT)) {
                    for (int i = writer; i < total; i += threads) {
                        long due = start + (long) (i * 1e9 / rate);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        }
                        insert.setObject(1, UUID.randomUUID());
                        insert.setString(2, topic);
                        insert.setString(3, "pay-" + (i % 500));
                        insert.setString(4, "{\"i\":" + i + ",\"t\":" + System.currentTimeMillis() + "}");
                        insert.executeUpdate();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            writers[w].start();
        }
        for (Thread writer : writers) {
            writer.join();
        }
        double achieved = total / ((System.nanoTime() - start) / 1e9);
        consumer.join(Duration.ofMinutes(2).toMillis());
        long[] sorted = new long[received.get()];
        for (int i = 0; i < sorted.length; i++) {
            sorted[i] = delays.get(i);
        }
        Arrays.sort(sorted);
        System.out.printf(
                "delay at %.0f events/s (target %d) for %d s, %d of %d received: p50 %d ms, p99 %d ms, max %d ms"
                        + " (insert -> record received by a consumer)%n",
                achieved,
                rate,
                seconds,
                sorted.length,
                total,
                percentile(sorted, 0.50),
                percentile(sorted, 0.99),
                sorted.length == 0 ? -1 : sorted[sorted.length - 1]);
    }

    private static final String INSERT =
            "INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES (?, 'PaymentCaptured', ?, ?, ?::jsonb)";

    private static void insertOne(Postgres.Database db, String topic, int i) throws SQLException {
        try (Connection sql = connect(db);
                PreparedStatement insert = sql.prepareStatement(INSERT)) {
            insert.setObject(1, UUID.randomUUID());
            insert.setString(2, topic);
            insert.setString(3, "warm-up");
            insert.setString(4, "{\"i\":" + i + ",\"t\":" + System.currentTimeMillis() + "}");
            insert.executeUpdate();
        }
    }

    private static void consume(
            String bootstrap, String topic, int total, AtomicLongArray delays, AtomicInteger received) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = List.of();
            while (partitions.isEmpty()) {
                partitions = consumer.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                        .map(p -> new TopicPartition(topic, p.partition()))
                        .toList();
            }
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (received.get() < total && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    String value = record.value();
                    if (value.contains("\"i\": -1")) {
                        continue;
                    }
                    long t = Long.parseLong(value.replaceAll(".*\"t\": ?(\\d+).*", "$1"));
                    int slot = received.getAndIncrement();
                    if (slot < total) {
                        delays.set(slot, now - t);
                    }
                }
            }
        }
    }

    private static long percentile(long[] sorted, double p) {
        return sorted.length == 0 ? -1 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
    }

    private static Process startRelay(Postgres.Database db, String bootstrap) throws Exception {
        Path jar = Path.of(System.getProperty("relay.jar", "outbox-relay/target/quarkus-app/quarkus-run.jar"));
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-Dquarkus.datasource.reactive.url=" + db.reactiveUrl(),
                "-Dquarkus.datasource.username=" + db.user(),
                "-Dkafka.bootstrap.servers=" + bootstrap,
                "-Dquarkus.http.port=0",
                "-Dquarkus.log.console.json=false",
                "-Drelay.batch-size=" + Integer.getInteger("bench.batch-size", 1000)));
        if (!db.password().isEmpty()) {
            command.add("-Dquarkus.datasource.password=" + db.password());
        }
        command.addAll(List.of("-jar", jar.toString()));
        File log = File.createTempFile("relay-bench-", ".log");
        System.out.println("relay log: " + log);
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
    }

    private static Connection connect(Postgres.Database db) throws SQLException {
        return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
    }

    private static long count(Postgres.Database db, String where) throws SQLException {
        return (long) scalar(db, "SELECT count(*) FROM outbox WHERE " + where);
    }

    private static double scalar(Postgres.Database db, String query) throws SQLException {
        try (Connection sql = connect(db);
                Statement st = sql.createStatement();
                ResultSet rs = st.executeQuery(query)) {
            rs.next();
            return rs.getDouble(1);
        }
    }
}
