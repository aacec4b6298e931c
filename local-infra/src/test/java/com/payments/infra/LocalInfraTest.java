package com.payments.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** Runs against the real servers that {@link Postgres} and {@link Kafka} resolve: no mocks. */
class LocalInfraTest {

    @Test
    void freshDatabaseAcceptsWritesAndReads() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("Local-Infra Test");
        assertTrue(db.name().startsWith("local_infra_test_"), db.name());
        assertEquals("postgresql://" + db.host() + ":" + db.port() + "/" + db.name(), db.reactiveUrl());
        assertNotEquals(db.name(), Postgres.freshDatabase("Local-Infra Test").name());

        try (Connection connection = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE note (id bigint PRIMARY KEY, body text NOT NULL)");
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO note VALUES (?, ?)")) {
                insert.setLong(1, 1L);
                insert.setString(2, "hello");
                assertEquals(1, insert.executeUpdate());
            }
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery(
                            "SELECT body, current_setting('server_version_num')" + " FROM note WHERE id = 1")) {
                assertTrue(rows.next());
                assertEquals("hello", rows.getString(1));
                assertTrue(rows.getString(2).startsWith("15"), "PostgreSQL 15, got " + rows.getString(2));
            }
        }
    }

    @Test
    void postgresTestResourceReturnsDatasourceProperties() {
        PostgresTestResource resource = new PostgresTestResource();
        resource.init(Map.of("prefix", "resource"));
        Map<String, String> config = resource.start();
        assertTrue(config.get("quarkus.datasource.jdbc.url").startsWith("jdbc:postgresql://"));
        assertTrue(config.get("quarkus.datasource.reactive.url").startsWith("postgresql://"));
        assertTrue(config.get("quarkus.datasource.reactive.url").contains("/resource_"));
        assertEquals(Postgres.server().user(), config.get("quarkus.datasource.username"));
        assertEquals(Postgres.server().password(), config.get("quarkus.datasource.password"));
    }

    @Test
    void recordProducedIsConsumedBack() throws Exception {
        String topic = "local-infra-roundtrip";
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, Kafka.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.ACKS_CONFIG, "all"))) {
            producer.send(new ProducerRecord<>(topic, "pay_1", "captured")).get(30, TimeUnit.SECONDS);
        }

        List<ConsumerRecord<String, String>> received = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, Kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "local-infra-test",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName()))) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (received.isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(received::add);
            }
        }
        assertEquals(1, received.size());
        assertEquals("pay_1", received.get(0).key());
        assertEquals("captured", received.get(0).value());
    }

    @Test
    void deleteAllTopicsRemovesTopics() throws Exception {
        try (Admin admin = Kafka.admin()) {
            admin.createTopics(List.of(new NewTopic("local-infra-doomed", 2, (short) 1)))
                    .all()
                    .get(30, TimeUnit.SECONDS);
            assertTrue(admin.listTopics().names().get().contains("local-infra-doomed"));

            Map<String, String> config = new KafkaTestResource().start();

            assertEquals(Kafka.bootstrapServers(), config.get("kafka.bootstrap.servers"));
            assertFalse(admin.listTopics().names().get().contains("local-infra-doomed"));
            assertTrue(admin.listTopics().names().get().isEmpty());
        }
    }
}
