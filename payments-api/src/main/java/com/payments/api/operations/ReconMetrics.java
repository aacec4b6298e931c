package com.payments.api.operations;

import com.payments.api.operations.ReconRunRepository.Snapshot;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The reconciler's metrics, read from the database it writes (docs/reconciler.md "Metrics"): the reconciler is a
 * CronJob with no scrape window, and every run already commits its summary to {@code recon_runs} in the run's
 * transaction, so payments-api exports the newest one. Gauges (Prometheus names): {@code
 * recon_last_success_timestamp_seconds}, {@code recon_last_failure_timestamp_seconds}, and of the newest successful
 * run {@code recon_last_run_duration_seconds}, {@code recon_last_run_lines_loaded}, {@code recon_last_run_matched},
 * {@code recon_last_run_breaks{type}}; {@code recon_breaks_reported} and {@code recon_breaks_open} over every date;
 * {@code recon_failed_dates}, the dates of the last 7 days whose newest finished run FAILED.
 * Every replica exports the same values: rules take {@code max}.
 */
@ApplicationScoped
public class ReconMetrics {
    private final Pool pool;
    private final ReconRunRepository repository;
    private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(new Snapshot(0, 0, null, 0, 0, 0));
    private final MultiGauge breaks;

    public ReconMetrics(Pool pool, ReconRunRepository repository, MeterRegistry registry) {
        this.pool = pool;
        this.repository = repository;
        gauge(
                registry,
                "recon.last.success.timestamp.seconds",
                "End of the newest successful reconciler run",
                s -> s.lastSuccessEpochSeconds());
        gauge(
                registry,
                "recon.last.failure.timestamp.seconds",
                "End of the newest failed reconciler run",
                s -> s.lastFailureEpochSeconds());
        gauge(
                registry,
                "recon.last.run.duration.seconds",
                "Duration of the newest successful run",
                s -> summaryNumber(s, "durationMs") / 1000.0);
        gauge(
                registry,
                "recon.last.run.lines.loaded",
                "Settlement lines loaded by the newest successful run",
                s -> summaryNumber(s, "linesLoaded"));
        gauge(
                registry,
                "recon.last.run.matched",
                "Items matched by the newest successful run",
                s -> summaryNumber(s, "matched"));
        gauge(
                registry,
                "recon.breaks.reported",
                "Reconciliation breaks REPORTED and not resolved",
                s -> s.reportedBreaks());
        gauge(registry, "recon.breaks.open", "Reconciliation breaks seen, not yet reported", s -> s.openBreaks());
        gauge(registry, "recon.failed.dates", "Dates of the last 7 days whose newest run FAILED", s -> s.failedDates());
        breaks = MultiGauge.builder("recon.last.run.breaks")
                .description("Breaks found by the newest successful run, by type")
                .register(registry);
    }

    private interface Reading {
        double of(Snapshot snapshot);
    }

    private void gauge(MeterRegistry registry, String name, String description, Reading reading) {
        Gauge.builder(name, snapshot, s -> reading.of(s.get()))
                .description(description)
                .register(registry);
    }

    private static double summaryNumber(Snapshot s, String field) {
        return s.lastSummary() == null ? 0 : s.lastSummary().getLong(field, 0L);
    }

    @Scheduled(
            identity = "recon-metrics",
            every = "${payments.metrics.recon-every:60s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return refresh().onFailure().recoverWithItem(e -> {
            Log.warnf("recon metrics not refreshed (next run retries): %s", e.toString());
            return null;
        });
    }

    /** Re-reads the database and updates the gauges. */
    public Uni<Void> refresh() {
        return repository.snapshot(pool).invoke(this::update).replaceWithVoid();
    }

    private void update(Snapshot fresh) {
        snapshot.set(fresh);
        JsonObject byType =
                fresh.lastSummary() == null ? null : fresh.lastSummary().getJsonObject("breaks");
        if (byType != null) {
            breaks.register(
                    byType.fieldNames().stream()
                            .map(type -> MultiGauge.Row.of(Tags.of("type", type), byType.getLong(type, 0L)))
                            .toList(),
                    true);
        } else {
            breaks.register(List.of(), true);
        }
    }
}
