package com.payments.api.console;

import static com.payments.api.console.ConsoleSql.list;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.List;

/** The reconciliation pages' reads: runs, breaks per day for the chart, a day's breaks. Nothing here writes. */
@ApplicationScoped
public class ConsoleReconRepository {
    private static final String RUN_COLUMNS = "id, business_date, status, started_at, finished_at, summary";

    private static final String BREAK_SELECT =
            """
            SELECT b.id, b.break_type, b.reference, b.psp_reference, b.internal_amount, b.psp_amount, b.currency,
                   b.status, b.times_seen, b.opened_at, b.resolution, b.business_date,
                   CASE WHEN EXISTS (SELECT 1 FROM payments p WHERE p.id = r.id) THEN 'payment'
                        WHEN EXISTS (SELECT 1 FROM refunds f WHERE f.id = r.id) THEN 'refund'
                        ELSE NULL END AS subject_kind
              FROM recon_breaks b
              CROSS JOIN LATERAL (SELECT CASE WHEN b.reference ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                                              THEN b.reference::uuid END AS id) r""";

    private final Pool pool;

    public ConsoleReconRepository(Pool pool) {
        this.pool = pool;
    }

    /** The last run of a business date with its summary (null while RUNNING or FAILED without one). */
    public record Run(
            long id,
            LocalDate businessDate,
            String status,
            OffsetDateTime startedAt,
            OffsetDateTime finishedAt,
            JsonObject summary) {
        static Run from(Row r) {
            return new Run(
                    r.getLong("id"),
                    r.getLocalDate("business_date"),
                    r.getString("status"),
                    r.getOffsetDateTime("started_at"),
                    r.getOffsetDateTime("finished_at"),
                    r.getJsonObject("summary"));
        }
    }

    /** The last run of each business date before {@code before}, newest date first; {@code limit + 1} rows. */
    public Uni<List<Run>> lastRuns(LocalDate before, int limit) {
        return list(
                pool,
                "SELECT DISTINCT ON (business_date) " + RUN_COLUMNS + "\n"
                        + """
                  FROM recon_runs WHERE business_date < $1
                 ORDER BY business_date DESC, id DESC LIMIT $2""",
                Tuple.of(before, limit + 1),
                Run::from);
    }

    public Uni<List<Run>> runsOf(LocalDate date) {
        return list(
                pool,
                "SELECT " + RUN_COLUMNS + " FROM recon_runs WHERE business_date = $1 ORDER BY id DESC LIMIT 100",
                Tuple.of(date),
                Run::from);
    }

    /** Breaks of one business date that are not resolved, and their unmatched amount per currency. */
    public record DayBreaks(LocalDate date, String currency, long breaks, long unmatched) {}

    /** Per date and currency in [from, to]: unresolved breaks and the sum of |psp amount - our amount|. */
    public Uni<List<DayBreaks>> breaksPerDay(LocalDate from, LocalDate to) {
        return list(
                pool,
                """
                SELECT business_date, coalesce(currency, '???') AS currency, count(*) AS n,
                       sum(abs(coalesce(psp_amount, 0) - coalesce(internal_amount, 0)))::bigint AS unmatched
                  FROM recon_breaks
                 WHERE business_date BETWEEN $1 AND $2 AND status <> 'RESOLVED'
                 GROUP BY business_date, currency ORDER BY business_date, currency""",
                Tuple.of(from, to),
                r -> new DayBreaks(
                        r.getLocalDate("business_date"),
                        r.getString("currency"),
                        r.getLong("n"),
                        r.getLong("unmatched")));
    }

    /** A break. */
    public record Break(
            long id,
            String type,
            String reference,
            String pspReference,
            Long internalAmount,
            Long pspAmount,
            String currency,
            String status,
            int timesSeen,
            OffsetDateTime openedAt,
            String resolution,
            String subjectKind) {
        static Break from(Row r) {
            return new Break(
                    r.getLong("id"),
                    r.getString("break_type"),
                    r.getString("reference"),
                    r.getString("psp_reference"),
                    r.getLong("internal_amount"),
                    r.getLong("psp_amount"),
                    r.getString("currency"),
                    r.getString("status"),
                    r.getInteger("times_seen"),
                    r.getOffsetDateTime("opened_at"),
                    r.getString("resolution"),
                    r.getString("subject_kind"));
        }
    }

    /** A page of a date's breaks after id {@code after} (keyset); {@code limit + 1} rows. */
    public Uni<List<Break>> breaks(LocalDate date, long after, int limit) {
        return list(
                pool,
                BREAK_SELECT + " WHERE b.business_date = $1 AND b.id > $2 ORDER BY b.id LIMIT $3",
                Tuple.of(date, after, limit + 1),
                Break::from);
    }
}
