package com.payments.relay;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import com.payments.infra.Kafka;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/** The relay started by the application: one row end to end, readiness, metrics. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class RelayTest {
    @Inject
    Pool pool;

    @Test
    void publishesTheRowWithItsKeyPayloadAndHeadersThenMarksItSent() {
        String topic = "relay-test-" + UUID.randomUUID();
        UUID eventId = UUID.randomUUID();
        pool.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
                        VALUES ($1, 'PaymentCaptured', $2, 'pay-1', '{"amount": 10}'::jsonb,
                                '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}'::jsonb)""")
                .execute(Tuple.of(eventId, topic))
                .await()
                .indefinitely();

        ConsumerRecord<String, String> record = RelayFixture.readAll(
                        Kafka.bootstrapServers(), topic, 1, Duration.ofSeconds(60))
                .get(0);

        assertThat(record.key()).isEqualTo("pay-1");
        assertThat(record.value()).isEqualTo("{\"amount\": 10}");
        assertThat(header(record, "event-id")).isEqualTo(eventId.toString());
        assertThat(header(record, "event-type")).isEqualTo("PaymentCaptured");
        // The stored trace goes on: same trace id; the span is the relay's publish when tracing is on
        // (docs/operations.md).
        assertThat(header(record, "traceparent")).matches("00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01");
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .until(() -> RelayFixture.count(pool, "event_id = '" + eventId + "' AND sent_at IS NOT NULL") == 1);
    }

    @Test
    void readyAsPublisherAndExposesMetricsOnTheManagementPortOnly() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> management()
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("checks.find { it.name == 'outbox-relay' }.data.publisher", equalTo(true)));
        for (String path : List.of("/q/health/ready", "/q/health/live", "/q/metrics")) {
            given().get(path).then().statusCode(404);
        }
        management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .body(containsString("outbox_unsent_rows"))
                .body(containsString("outbox_oldest_unsent_age_seconds"))
                .body(containsString("outbox_published_total"))
                .body(containsString("outbox_publish_errors_total"));
    }

    private static io.restassured.specification.RequestSpecification management() {
        return given().port(org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getValue("quarkus.management.test-port", Integer.class));
    }

    private static String header(ConsumerRecord<String, String> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
