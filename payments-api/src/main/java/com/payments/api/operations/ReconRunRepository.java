package com.payments.api.operations;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/** Reads what the reconciler (a CronJob) recorded in {@code recon_runs} and {@code recon_breaks}; never writes. */
@ApplicationScoped
public class ReconRunRepository {

    /**
     * @param lastSuccessEpochSeconds end of the newest SUCCEEDED run, 0 when there is none
     * @param lastFailureEpochSeconds end of the newest FAILED run, 0 when there is none
     * @param lastSummary the summary line of the newest SUCCEEDED run (docs/reconciler.md), null when none
     * @param reportedBreaks breaks REPORTED and not resolved, over every date
     * @param openBreaks breaks seen but not yet reported (debounce)
     * @param failedDates business dates of the last 7 days whose newest finished run FAILED
     */
    public record Snapshot(
            double lastSuccessEpochSeconds,
            double lastFailureEpochSeconds,
            JsonObject lastSummary,
            long reportedBreaks,
            long openBreaks,
            long failedDates) {}

    public Uni<Snapshot> snapshot(SqlClient client) {
        return client.query(
                        """
                        SELECT (SELECT COALESCE(EXTRACT(EPOCH FROM max(finished_at)), 0)::float8
                                  FROM recon_runs WHERE status = 'SUCCEEDED') AS last_success,
                               (SELECT COALESCE(EXTRACT(EPOCH FROM max(finished_at)), 0)::float8
                                  FROM recon_runs WHERE status = 'FAILED') AS last_failure,
                               (SELECT summary FROM recon_runs WHERE status = 'SUCCEEDED'
                                 ORDER BY id DESC LIMIT 1) AS summary,
                               (SELECT count(*) FROM recon_breaks WHERE status = 'REPORTED') AS reported,
                               (SELECT count(*) FROM recon_breaks WHERE status = 'OPEN') AS open,
                               (SELECT count(*) FROM (SELECT DISTINCT ON (business_date) status FROM recon_runs
                                                       WHERE status IN ('SUCCEEDED', 'FAILED')
                                                         AND business_date > current_date - 7
                                                       ORDER BY business_date, id DESC) newest
                                 WHERE status = 'FAILED') AS failed_dates""")
                .execute()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    Object summary = row.getValue("summary");
                    return new Snapshot(
                            row.getDouble("last_success"),
                            row.getDouble("last_failure"),
                            summary instanceof JsonObject json ? json : null,
                            row.getLong("reported"),
                            row.getLong("open"),
                            row.getLong("failed_dates"));
                });
    }
}
