package com.payments.relay;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import com.payments.infra.Kafka;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.ManagementPortTestResource;
import com.payments.infra.ManagementPortTestResource.Management;
import com.payments.infra.Postgres;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The packaged relay (jar, or the native executable with {@code -Dnative}) in its own process with the prod profile:
 * outbox rows of several payments, committed in one order, reach Kafka in that order per key, and are marked sent.
 * Surviving kill -9 is {@link RelayKillIT}, which runs the same artifact (QuarkusProcess).
 */
@QuarkusIntegrationTest
@TestProfile(OutboxRelayIT.Profile.class)
class OutboxRelayIT {
    private static final int KEYS = 5;
    private static final int PER_KEY = 200;

    public static class Profile implements QuarkusTestProfile {
        /** Plain-text logs: the launcher reads the random HTTP port from the start line, which JSON would wrap. */
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.log.console.json.enabled", "false");
        }

        /** Only these start: with disableGlobalTestResources, a profile's own resources are the suite's. */
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(
                    new TestResourceEntry(PostgresTestResource.class, Map.of("login", "app")),
                    new TestResourceEntry(ManagementPortTestResource.class),
                    new TestResourceEntry(KafkaTestResource.class));
        }

        @Override
        public boolean disableGlobalTestResources() {
            return true;
        }
    }

    Postgres.Database database;
    Management management;

    @Test
    void publishesEveryRowInCommitOrderPerKeyAndMarksItSent() throws Exception {
        String topic = "relay-it-" + UUID.randomUUID();
        Map<String, List<String>> expected = new LinkedHashMap<>();
        try (Connection sql = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                Statement st = sql.createStatement()) {
            // interleaved keys, one transaction per row: the commit order is the order per key
            for (int i = 0; i < KEYS * PER_KEY; i++) {
                String key = "pay-" + (i % KEYS);
                String eventId = UUID.randomUUID().toString();
                st.execute("INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES ('" + eventId
                        + "', 'PaymentCaptured', '" + topic + "', '" + key + "', jsonb_build_object('seq', " + i
                        + "))");
                expected.computeIfAbsent(key, k -> new ArrayList<>()).add(eventId);
            }
        }

        List<ConsumerRecord<String, String>> records =
                RelayFixture.readAll(Kafka.bootstrapServers(), topic, KEYS * PER_KEY, Duration.ofSeconds(120));

        Map<String, List<String>> published = new LinkedHashMap<>();
        for (ConsumerRecord<String, String> record : records) {
            String eventId = new String(record.headers().lastHeader("event-id").value(), StandardCharsets.UTF_8);
            List<String> ofKey = published.computeIfAbsent(record.key(), k -> new ArrayList<>());
            if (!ofKey.contains(eventId)) { // at least once: a redelivered record keeps its first place
                ofKey.add(eventId);
            }
        }
        assertThat(published).isEqualTo(expected);
        await().atMost(Duration.ofSeconds(60)).until(() -> unsent(topic) == 0);
    }

    @Test
    void readyAsPublisherWithMetrics() {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().baseUri(management.url())
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("checks.find { it.name == 'outbox-relay' }.data.publisher", equalTo(true)));
        given().baseUri(management.url())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .body(containsString("outbox_published_total"));
    }

    private long unsent(String topic) throws Exception {
        try (Connection sql = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                Statement st = sql.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT count(*) FROM outbox WHERE sent_at IS NULL AND topic = '" + topic + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
