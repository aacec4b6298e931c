package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.QuarkusProcess;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * The packaged relay (the jar, or the native executable after {@code -Dnative}) as a real process, killed with SIGKILL
 * between a publish and its mark, then started again: every committed row is on Kafka at least once. The test holds a
 * row lock on the third batch's rows, so the relay publishes that batch but cannot mark it: the kill lands in exactly
 * the window the at-least-once contract is about, every time, instead of by luck of timing.
 */
class RelayKillIT {
    private static final int ROWS = 40_000;

    @Test
    void killedMidBatchAndRestartedEveryEventIsOnKafka() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("relay_kill");
        String bootstrap = Kafka.bootstrapServers();
        String topic = "relay-kill-" + UUID.randomUUID();
        Set<String> expected = new HashSet<>();
        try (Admin admin = Kafka.admin()) {
            // Created up front: the relay's first batch into a topic the broker is still creating can time out.
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                Statement st = sql.createStatement()) {
            st.execute("INSERT INTO outbox (event_id, event_type, topic, key, payload) SELECT gen_random_uuid(),"
                    + " 'PaymentCaptured', '" + topic + "', 'pay-' || (g % 500), jsonb_build_object('g', g)"
                    + " FROM generate_series(1, " + ROWS + ") g");
            try (ResultSet rs = st.executeQuery("SELECT event_id FROM outbox")) {
                while (rs.next()) {
                    expected.add(rs.getString(1));
                }
            }
        }

        // The relay reads in id order, 1000 rows a batch: lock the third batch so that its mark waits for us.
        try (Connection locker = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
            locker.setAutoCommit(false);
            try (Statement st = locker.createStatement()) {
                // (FOR UPDATE on the OFFSET query itself would lock the skipped rows too)
                st.execute(
                        "SELECT id FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY id OFFSET 2000 LIMIT 1000)"
                                + " FOR UPDATE");
            }
            QuarkusProcess killed = startRelay(db, bootstrap);
            // Stuck on the locked rows: the relay's mark waits for our lock, so the batch it published stays unmarked.
            // (Where the batches begin can shift: a publish that fails part way, e.g. on a loaded broker, is marked up
            // to its last acknowledged row, so the stuck batch is not always exactly the third.)
            await().atMost(Duration.ofMinutes(3))
                    .until(() -> markWaitsForOurLock(db) && recordsOnKafka(bootstrap, topic) > sent(db));
            killed.kill(); // SIGKILL: no shutdown hook, no graceful end of the round
            long marked = sent(db);
            long onKafka = recordsOnKafka(bootstrap, topic);
            System.out.printf("killed: %d rows marked sent, %d records on Kafka%n", marked, onKafka);
            assertThat(onKafka)
                    .as("the kill landed after a publish and before its mark")
                    .isGreaterThan(marked);
            locker.rollback();
        }

        try (QuarkusProcess relay = startRelay(db, bootstrap)) {
            await().atMost(Duration.ofMinutes(5)).until(() -> sent(db) == ROWS);
        }
        Set<String> onKafka = new HashSet<>();
        RelayFixture.readAll(bootstrap, topic, ROWS, Duration.ofMinutes(3))
                .forEach(r -> onKafka.add(RelayFixture.eventId(r)));
        assertThat(onKafka).isEqualTo(expected);
    }

    /** The module's last build: the native executable after {@code -Dnative}, else the jar (QuarkusProcess). */
    private static QuarkusProcess startRelay(Postgres.Database db, String bootstrap) {
        Map<String, String> config = new HashMap<>(Map.of(
                "quarkus.datasource.reactive.url",
                db.reactiveUrl(),
                "quarkus.datasource.username",
                db.user(),
                "kafka.bootstrap.servers",
                bootstrap,
                "quarkus.log.console.json.enabled",
                "false",
                "relay.batch-size",
                "1000"));
        if (!db.password().isEmpty()) {
            config.put("quarkus.datasource.password", db.password());
        }
        return QuarkusProcess.start("outbox-relay", "256m", config);
    }

    private static boolean markWaitsForOurLock(Postgres.Database db) throws SQLException {
        try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                Statement st = sql.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                + " AND wait_event_type = 'Lock' AND query LIKE 'UPDATE outbox SET%'")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    private static long sent(Postgres.Database db) throws SQLException {
        try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                Statement st = sql.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long recordsOnKafka(String bootstrap, String topic) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition()))
                    .toList();
            return consumer.endOffsets(partitions).values().stream()
                    .mapToLong(Long::longValue)
                    .sum();
        }
    }
}
