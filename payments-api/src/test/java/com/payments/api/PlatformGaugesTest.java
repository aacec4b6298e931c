package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.operations.ReconMetrics;
import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The gauges payments-api reads from PostgreSQL for the alerts (k8s/monitoring): the oldest open operations item,
 * and the reconciler's runs and breaks as the reconciler records them (docs/reconciler.md "Summary line").
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class PlatformGaugesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    Pool pool;

    @Inject
    PaymentResolver resolver;

    @Inject
    ReconMetrics recon;

    @Test
    void merchantApiLatencyHasHistogramBuckets() {
        TestSupport.capture(
                        TestSupport.KEY_A,
                        TestSupport.unique("key"),
                        TestSupport.body(TestSupport.unique("order"), 100, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
        String metrics = scrape();
        assertThat(metrics.lines()
                        .filter(line -> line.startsWith("http_server_requests_seconds_bucket{")
                                && line.contains("uri=\"/v1/payments\""))
                        .map(line -> line.replaceAll(".*le=\"([^\"]+)\".*", "$1")))
                .contains("0.005", "0.1", "1.0", "10.0", "+Inf");
    }

    @Test
    void oldestOpenOperationsItemAgeIsExportedAndDropsWhenItIsResolved() {
        String subject = UUID.randomUUID().toString();
        long id = pool.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, created_at)
                        VALUES ('payment', $1, 'resolver_deadline', now() - interval '3 hours') RETURNING id""")
                .execute(Tuple.of(subject))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getLong("id");
        resolver.refreshMetrics().await().atMost(WAIT);
        assertThat(ResolverTest.metric(scrape(), "payments_operations_oldest_open_age_seconds "))
                .isBetween(10_800.0, 11_100.0);

        pool.preparedQuery("UPDATE operations_queue SET status = 'RESOLVED', resolved_at = now() WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .atMost(WAIT);
        resolver.refreshMetrics().await().atMost(WAIT);
        assertThat(ResolverTest.metric(scrape(), "payments_operations_oldest_open_age_seconds "))
                .isLessThan(10_800.0);
    }

    @Test
    void newestReconcilerRunsAndOpenBreaksAreExported() {
        recon.refresh().await().atMost(WAIT);
        String before = scrape();
        double reportedBefore = ResolverTest.metric(before, "recon_breaks_reported ");
        double openBefore = ResolverTest.metric(before, "recon_breaks_open ");
        double failedBefore = ResolverTest.metric(before, "recon_failed_dates ");

        Instant succeededAt = Instant.parse("2031-04-11T04:31:07Z");
        Instant failedAt = Instant.parse("2031-04-12T04:30:30Z");
        JsonObject summary = new JsonObject()
                .put("status", "SUCCEEDED")
                .put("linesLoaded", 1234)
                .put("matched", 1200)
                .put("durationMs", 95_500)
                .put(
                        "breaks",
                        new JsonObject()
                                .put("AMOUNT_MISMATCH", 2)
                                .put("MISSING_AT_PSP", 1)
                                .put("MISSING_INTERNAL", 0));
        long run = insertRun("2031-04-10", "SUCCEEDED", succeededAt, summary);
        insertRun("2031-04-11", "FAILED", failedAt, new JsonObject().put("status", "FAILED"));
        String date = "2031-04-10";
        insertBreak(date, "AMOUNT_MISMATCH", "REPORTED", run);
        insertBreak(date, "AMOUNT_MISMATCH", "REPORTED", run);
        insertBreak(date, "MISSING_AT_PSP", "OPEN", run);
        insertBreak(date, "MISSING_INTERNAL", "RESOLVED", run);

        recon.refresh().await().atMost(WAIT);
        String metrics = scrape();
        assertThat(ResolverTest.metric(metrics, "recon_last_success_timestamp_seconds "))
                .isEqualTo(succeededAt.getEpochSecond());
        assertThat(ResolverTest.metric(metrics, "recon_last_failure_timestamp_seconds "))
                .isEqualTo(failedAt.getEpochSecond());
        assertThat(ResolverTest.metric(metrics, "recon_last_run_duration_seconds "))
                .isEqualTo(95.5);
        assertThat(ResolverTest.metric(metrics, "recon_last_run_lines_loaded ")).isEqualTo(1234);
        assertThat(ResolverTest.metric(metrics, "recon_last_run_matched ")).isEqualTo(1200);
        assertThat(ResolverTest.metric(metrics, "recon_last_run_breaks{type=\"AMOUNT_MISMATCH\"}"))
                .isEqualTo(2);
        assertThat(ResolverTest.metric(metrics, "recon_last_run_breaks{type=\"MISSING_AT_PSP\"}"))
                .isEqualTo(1);
        assertThat(ResolverTest.metric(metrics, "recon_breaks_reported ")).isEqualTo(reportedBefore + 2);
        assertThat(ResolverTest.metric(metrics, "recon_breaks_open ")).isEqualTo(openBefore + 1);
        assertThat(ResolverTest.metric(metrics, "recon_failed_dates ")).isEqualTo(failedBefore + 1);

        // a later successful run of the failed date clears it
        insertRun("2031-04-11", "SUCCEEDED", failedAt.plusSeconds(600), summary);
        recon.refresh().await().atMost(WAIT);
        assertThat(ResolverTest.metric(scrape(), "recon_failed_dates ")).isEqualTo(failedBefore);
    }

    private long insertRun(String date, String status, Instant finishedAt, JsonObject summary) {
        return pool.preparedQuery(
                        """
                        INSERT INTO recon_runs (business_date, status, started_at, finished_at, summary)
                        VALUES ($1::date, $2, $3::timestamptz - interval '2 minutes', $3::timestamptz, $4)
                        RETURNING id""")
                .execute(Tuple.of(LocalDate.parse(date), status, finishedAt.atOffset(ZoneOffset.UTC), summary))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getLong("id");
    }

    private void insertBreak(String date, String type, String status, long run) {
        pool.preparedQuery(
                        """
                        INSERT INTO recon_breaks (business_date, break_type, reference, status, first_run_id, last_run_id,
                                                  reported_at, resolved_at)
                        VALUES ($1::date, $2, $3, $4, $5, $5,
                                CASE WHEN $4 = 'REPORTED' THEN now() END, CASE WHEN $4 = 'RESOLVED' THEN now() END)""")
                .execute(Tuple.from(new Object[] {
                    LocalDate.parse(date), type, UUID.randomUUID().toString(), status, run
                }))
                .await()
                .atMost(WAIT);
    }

    private static String scrape() {
        return TestSupport.management()
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .extract()
                .asString();
    }
}
