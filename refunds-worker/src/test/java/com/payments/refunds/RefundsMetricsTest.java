package com.payments.refunds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The business metrics of docs/refunds.md ("Metrics") as Prometheus scrapes them from {@code /q/metrics}, after real
 * refunds against the real sandbox, a poison record on the real broker and a PENDING refund left behind in
 * PostgreSQL. Counters are compared with their value before the test (other tests share the application).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class RefundsMetricsTest {
    private static final String SUCCEEDED = "refunds_outcomes_total{outcome=\"succeeded\"}";
    private static final String FAILED = "refunds_outcomes_total{outcome=\"failed\"}";
    private static final String INVALID = "refunds_dead_lettered_total{reason=\"invalid_command\"}";
    private static final String PSP_CALLS = "refunds_psp_latency_seconds_count{";
    private static final String DLQ = "refunds_dlq_records";
    private static final String OLDEST = "refunds_pending_oldest_age_seconds";

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @Test
    void outcomesPspLatencyDeadLettersAndPendingAgeAreExported() {
        Fixtures fx = new Fixtures(pool, mapper, pspUrl);
        Map<String, Double> before = scrape();

        Fixtures.Captured payment = fx.capture("tok_visa", 9_000);
        UUID succeeding = fx.reserve(payment, 1_000);
        Fixtures.Captured declining = fx.capture("tok_refundFails", 9_000);
        UUID declined = fx.reserve(declining, 1_000);
        // Left behind two hours ago and leased for an hour, so that neither the consumer nor the sync finishes it.
        UUID stuck = fx.reserve(payment, 500, Duration.ofHours(2));
        fx.query("UPDATE refunds SET next_attempt_at = now() + interval '1 hour' WHERE id = $1", stuck);

        fx.publish(payment.paymentId().toString(), "{not json", fx.json(fx.command(payment, succeeding, 1_000)));
        fx.publish(fx.command(declining, declined, 1_000));
        await().atMost(Fixtures.WAIT).until(() -> fx.status(succeeding).equals("SUCCEEDED"));
        await().atMost(Fixtures.WAIT).until(() -> fx.status(declined).equals("FAILED"));

        await().atMost(Fixtures.WAIT).untilAsserted(() -> {
            Map<String, Double> after = scrape();
            assertThat(delta(after, before, SUCCEEDED)).as(SUCCEEDED).isEqualTo(1);
            assertThat(delta(after, before, FAILED)).as(FAILED).isEqualTo(1);
            assertThat(delta(after, before, INVALID)).as(INVALID).isEqualTo(1);
            // A call cut by the timeout on a slow machine is an error and the sync's lookup gets the answer: count
            // both calls.
            assertThat(calls(after, "succeeded") - calls(before, "succeeded"))
                    .as("PSP calls answered succeeded")
                    .isGreaterThanOrEqualTo(1);
            assertThat(calls(after, "failed") - calls(before, "failed"))
                    .as("PSP calls answered failed")
                    .isGreaterThanOrEqualTo(1);
            assertThat(delta(after, before, DLQ))
                    .as("records in the dead-letter topic")
                    .isGreaterThanOrEqualTo(1);
            assertThat(after.get(OLDEST)).as(OLDEST).isBetween(7_200.0, 7_500.0);
            assertThat(after.get("refunds_pending")).as("refunds_pending").isGreaterThanOrEqualTo(1);
        });
        Map<String, Double> now = scrape();
        assertThat(now.keySet())
                .as("the Kafka client's lag of the refund-commands consumer")
                .anyMatch(series -> series.startsWith("kafka_consumer_fetch_manager_records_lag_max{"));

        fx.query("UPDATE refunds SET status = 'FAILED', failure_code = 'test' WHERE id = $1", stuck);
        await().atMost(Fixtures.WAIT).until(() -> scrape().get(OLDEST) < 7_200);
    }

    /** PSP calls (refunds and lookups) with this outcome, from the latency histogram's count. */
    private static double calls(Map<String, Double> series, String outcome) {
        return series.entrySet().stream()
                .filter(e -> e.getKey().startsWith(PSP_CALLS) && e.getKey().contains("outcome=\"" + outcome + "\""))
                .mapToDouble(Map.Entry::getValue)
                .sum();
    }

    private static double delta(Map<String, Double> after, Map<String, Double> before, String series) {
        return after.getOrDefault(series, 0.0) - before.getOrDefault(series, 0.0);
    }

    /** Series (name with labels as exported) to value, from the Prometheus text format. */
    private static Map<String, Double> scrape() {
        int management = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        String text = given().port(management)
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Map<String, Double> series = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String sample = withoutExemplar(line);
            int space = sample.lastIndexOf(' ');
            series.put(sample.substring(0, space), Double.parseDouble(sample.substring(space + 1)));
        }
        return series;
    }

    /**
     * The sample without its exemplar ({@code value # {trace_id=…} value timestamp}), which the OpenMetrics answer
     * carries for counters and histograms while tracing is on.
     */
    private static String withoutExemplar(String line) {
        int exemplar = line.indexOf(" # ");
        return exemplar < 0 ? line : line.substring(0, exemplar);
    }
}
