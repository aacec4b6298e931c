package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * The packaged relay ({@code target/quarkus-app/quarkus-run.jar}) as a real process, killed with SIGKILL while it
 * drains a backlog, then started again: every committed row is on Kafka at least once. The test repeats the kill
 * until one lands between a publish and its mark (more records on Kafka than rows marked sent), which is the
 * window the at-least-once contract is about.
 */
class RelayKillIT {
    private static final int ROWS = 40_000;
    private static final int MAX_KILLS = 5;

    @Test
    void killedMidBatchAndRestartedEveryEventIsOnKafka() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("relay_kill");
        String bootstrap = Kafka.bootstrapServers();
        String topic = "relay-kill-" + UUID.randomUUID();
        Set<String> expected = new HashSet<>();
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

        boolean killedBetweenPublishAndMark = false;
        for (int attempt = 1; attempt <= MAX_KILLS && !killedBetweenPublishAndMark; attempt++) {
            long sentBefore = sent(db);
            if (sentBefore == ROWS) {
                break;
            }
            Process relay = startRelay(db, bootstrap, "kill-" + attempt);
            await().atMost(Duration.ofMinutes(3)).until(() -> sent(db) >= sentBefore + 2_000);
            relay.destroyForcibly(); // SIGKILL: no shutdown hook, no graceful end of the round
            relay.waitFor();
            long marked = sent(db);
            long onKafka = recordsOnKafka(bootstrap, topic);
            killedBetweenPublishAndMark = onKafka > marked;
            System.out.printf("kill %d: %d rows marked sent, %d records on Kafka%n", attempt, marked, onKafka);
        }
        assertThat(killedBetweenPublishAndMark)
                .as("one kill landed after a publish and before its mark")
                .isTrue();

        Process relay = startRelay(db, bootstrap, "final");
        try {
            await().atMost(Duration.ofMinutes(5)).until(() -> sent(db) == ROWS);
        } finally {
            relay.destroy();
            relay.waitFor();
        }
        Set<String> onKafka = new HashSet<>();
        RelayFixture.readAll(bootstrap, topic, ROWS, Duration.ofMinutes(3))
                .forEach(r -> onKafka.add(RelayFixture.eventId(r)));
        assertThat(onKafka).isEqualTo(expected);
    }

    private static Process startRelay(Postgres.Database db, String bootstrap, String name) throws Exception {
        Path jar = Path.of(System.getProperty("relay.jar", "target/quarkus-app/quarkus-run.jar"));
        assertThat(jar).exists();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-Dquarkus.datasource.reactive.url=" + db.reactiveUrl(),
                "-Dquarkus.datasource.username=" + db.user(),
                "-Dkafka.bootstrap.servers=" + bootstrap,
                "-Dquarkus.http.port=0",
                "-Dquarkus.log.console.json=false",
                "-Drelay.batch-size=1000"));
        if (!db.password().isEmpty()) {
            command.add("-Dquarkus.datasource.password=" + db.password());
        }
        command.addAll(List.of("-jar", jar.toString()));
        File log = Path.of("target", "relay-" + name + ".log").toFile();
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
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
