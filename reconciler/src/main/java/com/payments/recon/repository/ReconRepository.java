package com.payments.recon.repository;

import com.payments.contracts.SqlResource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reconciler's SQL. Every method takes the run's JDBC {@link Connection}, so all of a run happens in its one
 * transaction.
 */
@ApplicationScoped
public class ReconRepository {
    /** Outcomes of the match that are breaks (recon_breaks.break_type). */
    public static final List<String> BREAK_TYPES = List.of(
            "MISSING_INTERNAL",
            "MISSING_AT_PSP",
            "AMOUNT_MISMATCH",
            "CURRENCY_MISMATCH",
            "STATUS_MISMATCH",
            "DUPLICATE_AT_PSP",
            "CHARGEBACK");

    /** A settlement line that settles a payment we hold as UNKNOWN, with the same amount and currency. */
    public record SettledUnknown(
            String paymentId, String pspReference, long amount, String currency, Instant settledAt) {}

    /** A break that became REPORTED in this run. */
    public record Reported(String breakType, String reference, Long internalAmount, Long pspAmount, String currency) {}

    /** A break closed in this run. */
    public record Resolved(String breakType, String reference, String resolution) {}

    /**
     * A payment the run moved UNKNOWN → CAPTURED: what its PaymentCaptured event needs besides the settlement
     * ({@code metadataJson}: the merchant's metadata, a JSON object).
     */
    public record CapturedPayment(String merchantId, String orderId, String metadataJson) {}

    private static final String MATCH = SqlResource.load(ReconRepository.class, "recon-match.sql");
    private static final String UPSERT_BREAKS = SqlResource.load(ReconRepository.class, "recon-upsert-breaks.sql");

    /** One key per date for pg_try_advisory_xact_lock(int, int): a namespace and the epoch day. */
    private static final int LOCK_NAMESPACE = 0x5245_434E; // "RECN"

    public boolean tryLock(Connection c, LocalDate date) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_xact_lock(?, ?)")) {
            ps.setInt(1, LOCK_NAMESPACE);
            ps.setInt(2, (int) date.toEpochDay());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    public long insertRun(Connection c, LocalDate date, String status) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO recon_runs (business_date, status) VALUES (?, ?) RETURNING id")) {
            ps.setObject(1, date);
            ps.setString(2, status);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    public void finishRun(Connection c, long runId, String status, String summaryJson) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                UPDATE recon_runs SET status = ?, finished_at = clock_timestamp(), summary = ?::jsonb WHERE id = ?
                """)) {
            ps.setString(1, status);
            ps.setString(2, summaryJson);
            ps.setLong(3, runId);
            ps.executeUpdate();
        }
    }

    /** Previous successful run of the date: a break seen there and now is seen in two consecutive runs. */
    public Long previousRun(Connection c, LocalDate date, long runId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                SELECT max(id) FROM recon_runs WHERE business_date = ? AND status = 'SUCCEEDED' AND id < ?
                """)) {
            ps.setObject(1, date);
            ps.setLong(2, runId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                return rs.wasNull() ? null : id;
            }
        }
    }

    public void deleteSettlements(Connection c, LocalDate date) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM psp_settlements WHERE business_date = ?")) {
            ps.setObject(1, date);
            ps.executeUpdate();
        }
    }

    /**
     * The match: our captured payments and successful refunds of the date (widened by the window on both sides) FULL
     * OUTER JOIN the CHARGE, REFUND, CHARGEBACK and REFUND_FAILURE lines of the date's file, classified into outcomes (docs/reconciler.md). An item
     * of ours that the file lacks is looked up in the neighbouring files (midnight cut-off) and in the files of the
     * {@code lateResolutionDays} dates before (recorded late). The result lives in the temporary table
     * {@code recon_result} until the transaction ends. The statement is {@code sql/recon-match.sql}.
     */
    public void match(Connection c, LocalDate date, Duration window, int lateResolutionDays) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(MATCH)) {
            ps.setObject(1, date);
            ps.setDouble(2, window.toMillis() / 1000.0);
            ps.setInt(3, lateResolutionDays);
            ps.executeUpdate();
        }
    }

    /** Rows of {@code recon_result} per outcome. */
    public Map<String, Long> outcomeCounts(Connection c) throws SQLException {
        Map<String, Long> counts = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT outcome, count(*) FROM recon_result GROUP BY outcome");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getLong(2));
            }
        }
        return counts;
    }

    /** Sum of the matched amounts per currency. */
    public Map<String, Long> matchedAmounts(Connection c) throws SQLException {
        Map<String, Long> sums = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                        """
                        SELECT psp_currency, sum(psp_amount)::bigint FROM recon_result
                         WHERE outcome IN ('MATCHED', 'MATCHED_OUTSIDE_WINDOW') GROUP BY psp_currency
                        """);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                sums.put(rs.getString(1), rs.getLong(2));
            }
        }
        return sums;
    }

    /**
     * Records this run's breaks. New ones are OPEN (from now: {@code opened_at}); one also seen by the previous
     * successful run of the date and open for at least {@code reportAfter} becomes REPORTED (debounce: a retry minutes
     * later is not a second sighting); a RESOLVED one that shows again is reopened and starts over.
     */
    public void upsertBreaks(Connection c, LocalDate date, long runId, Long previousRunId, Duration reportAfter)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(UPSERT_BREAKS)) {
            ps.setObject(1, date);
            ps.setLong(2, runId);
            ps.setLong(3, runId);
            ps.setArray(4, c.createArrayOf("text", BREAK_TYPES.toArray()));
            ps.setObject(5, previousRunId, java.sql.Types.BIGINT);
            ps.setLong(6, reportAfter.toMillis());
            ps.setObject(7, previousRunId, java.sql.Types.BIGINT);
            ps.setLong(8, reportAfter.toMillis());
            ps.executeUpdate();
        }
    }

    /** Breaks that became REPORTED in this transaction ({@code now()} is the transaction's start). */
    public List<Reported> newlyReported(Connection c, LocalDate date, long runId) throws SQLException {
        List<Reported> reported = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                """
                SELECT break_type, reference, internal_amount, psp_amount, currency FROM recon_breaks
                 WHERE business_date = ? AND last_run_id = ? AND status = 'REPORTED' AND reported_at = now()
                 ORDER BY break_type, reference
                """)) {
            ps.setObject(1, date);
            ps.setLong(2, runId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    reported.add(new Reported(
                            rs.getString(1),
                            rs.getString(2),
                            (Long) rs.getObject(3),
                            (Long) rs.getObject(4),
                            rs.getString(5)));
                }
            }
        }
        return reported;
    }

    /** Open breaks of the date by status (after this run's upsert and resolution). */
    public Map<String, Long> openBreaks(Connection c, LocalDate date) throws SQLException {
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put("OPEN", 0L);
        counts.put("REPORTED", 0L);
        try (PreparedStatement ps = c.prepareStatement(
                """
                SELECT status, count(*) FROM recon_breaks
                 WHERE business_date = ? AND status IN ('OPEN', 'REPORTED') GROUP BY status
                """)) {
            ps.setObject(1, date);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return counts;
    }

    /** Closes the open breaks of the date that this run did not see, saying what the item looks like now. */
    public List<Resolved> resolveVanished(Connection c, LocalDate date, long runId) throws SQLException {
        List<Resolved> resolved = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                """
                UPDATE recon_breaks b SET status = 'RESOLVED', resolved_at = now(),
                       resolution = 'not seen by run ' || ? || '; now '
                           || coalesce((SELECT string_agg(DISTINCT r.outcome, ',') FROM recon_result r
                                         WHERE r.reference = b.reference), 'outside the date')
                 WHERE b.business_date = ? AND b.status IN ('OPEN', 'REPORTED') AND b.last_run_id <> ?
                RETURNING b.break_type, b.reference, b.resolution
                """)) {
            ps.setLong(1, runId);
            ps.setObject(2, date);
            ps.setLong(3, runId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    resolved.add(new Resolved(rs.getString(1), rs.getString(2), rs.getString(3)));
                }
            }
        }
        return resolved;
    }

    public List<SettledUnknown> settledUnknown(Connection c) throws SQLException {
        List<SettledUnknown> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                        """
                        SELECT reference, psp_reference, psp_amount, psp_currency, settled_at FROM recon_result
                         WHERE outcome = 'SETTLED_UNKNOWN' ORDER BY reference
                        """);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(new SettledUnknown(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getLong(3),
                        rs.getString(4),
                        rs.getObject(5, OffsetDateTime.class).toInstant()));
            }
        }
        return rows;
    }

    /**
     * UNKNOWN → CAPTURED, guarded: only if still UNKNOWN with that amount and currency. Null when the guard did not
     * hold (someone else resolved it first).
     */
    public CapturedPayment captureUnknown(Connection c, SettledUnknown s) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                UPDATE payments
                   SET status = 'CAPTURED', psp_reference = coalesce(psp_reference, ?), captured_at = ?,
                       next_attempt_at = NULL, last_error = NULL
                 WHERE id = ?::uuid AND status = 'UNKNOWN' AND amount = ? AND currency = ?
                 RETURNING merchant_id::text, order_id, metadata::text
                """)) {
            ps.setString(1, s.pspReference());
            ps.setObject(2, s.settledAt().atOffset(ZoneOffset.UTC));
            ps.setString(3, s.paymentId());
            ps.setLong(4, s.amount());
            ps.setString(5, s.currency());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new CapturedPayment(rs.getString(1), rs.getString(2), rs.getString(3)) : null;
            }
        }
    }

    /**
     * Capture entries (docs/operations.md, "Ledger accounts"), booked once per payment by UNIQUE (kind, reference): a
     * payment booked before is left as it is.
     */
    public void bookCapture(Connection c, SettledUnknown s, String merchantId, LocalDate date) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                SELECT book_ledger_transaction('CAPTURE', 'psp_receivable', 'merchant_payable', ?, ?::uuid, ?, ?, ?,
                                               true)
                """)) {
            ps.setString(1, s.paymentId());
            ps.setString(2, merchantId);
            ps.setString(3, "capture of an UNKNOWN payment confirmed by the settlement file of " + date);
            ps.setLong(4, s.amount());
            ps.setString(5, s.currency());
            ps.execute();
        }
    }

    /** Enqueues an event for outbox-relay; {@code headersJson} are its Kafka headers (a JSON object: the run's trace context). */
    public void enqueueEvent(
            Connection c, String eventId, String type, String topic, String key, String payload, String headersJson)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT enqueue_event(?::uuid, ?, ?, ?, ?::jsonb, ?::jsonb)")) {
            ps.setString(1, eventId);
            ps.setString(2, type);
            ps.setString(3, topic);
            ps.setString(4, key);
            ps.setString(5, payload);
            ps.setString(6, headersJson);
            ps.execute();
        }
    }

    /**
     * Books the day's PSP fees per currency (the fee column of every line plus the amount of FEE lines) as one FEE
     * ledger transaction per date and currency: {@code psp_fees} +fee, {@code psp_receivable} −fee. Returns the file's
     * fee total per currency.
     */
    public Map<String, Long> bookFees(Connection c, LocalDate date) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                WITH totals AS (
                    SELECT currency::text AS currency,
                           sum(fee + CASE WHEN type = 'FEE' THEN amount ELSE 0 END)::bigint AS total
                      FROM psp_settlements WHERE business_date = ? GROUP BY currency),
                booked AS (
                    SELECT book_ledger_transactions('FEE', 'psp_fees', 'psp_receivable',
                                                    array_agg('settlement-fees:' || ? || ':' || currency),
                                                    array_agg(NULL::uuid),
                                                    array_agg('PSP fees of the settlement file of ' || ?),
                                                    array_agg(total), array_agg(currency), true)
                      FROM totals WHERE total <> 0)
                SELECT currency, total FROM totals, booked
                """)) {
            ps.setObject(1, date);
            ps.setString(2, date.toString());
            ps.setString(3, date.toString());
            Map<String, Long> totals = new TreeMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    totals.put(rs.getString(1), rs.getLong(2));
                }
            }
            return totals;
        }
    }

    /**
     * Fee totals already booked for the date that differ from this file's (the PSP re-issued the file): the ledger is
     * append-only, so a human books the correction.
     */
    public int queueChangedFees(Connection c, LocalDate date, Map<String, Long> totals) throws SQLException {
        int queued = 0;
        for (Map.Entry<String, Long> e : totals.entrySet()) {
            try (PreparedStatement ps = c.prepareStatement(
                    """
                    INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                    SELECT 'recon', lt.reference, 'FEE_TOTAL_CHANGED',
                           jsonb_build_object('booked', le.amount, 'file', ?::bigint, 'currency', ?::text)
                      FROM ledger_transactions lt
                      JOIN ledger_entries le ON le.transaction_id = lt.id AND le.account = 'psp_fees'
                     WHERE lt.kind = 'FEE' AND lt.reference = ? AND le.amount <> ?
                    ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING
                    """)) {
                ps.setLong(1, e.getValue());
                ps.setString(2, e.getKey());
                ps.setString(3, "settlement-fees:" + date + ":" + e.getKey());
                ps.setLong(4, e.getValue());
                queued += ps.executeUpdate();
            }
        }
        return queued;
    }

    /** Items a human decides: status mismatches (incl. UNKNOWN with another amount) and chargebacks. */
    public int queueForHumans(Connection c, LocalDate date) throws SQLException {
        int queued = 0;
        try (PreparedStatement ps = c.prepareStatement(
                """
                INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                SELECT DISTINCT ON (reference) CASE kind WHEN 'CHARGE' THEN 'payment' ELSE 'refund' END, reference,
                       'RECON_STATUS_MISMATCH',
                       jsonb_build_object('businessDate', ?::text, 'status', internal_status, 'pspReference',
                                          psp_reference, 'pspAmount', psp_amount, 'amount', other_amount,
                                          'pspCurrency', psp_currency, 'currency', other_currency)
                  FROM recon_result WHERE outcome = 'STATUS_MISMATCH'
                 ORDER BY reference
                ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING
                """)) {
            ps.setString(1, date.toString());
            queued += ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement(
                """
                INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                SELECT DISTINCT ON (reference) 'payment', reference, 'PSP_CHARGEBACK',
                       jsonb_build_object('businessDate', ?::text, 'pspReference', psp_reference, 'amount', amount,
                                          'currency', currency, 'settledAt', settled_at)
                  FROM psp_settlements WHERE business_date = ? AND type = 'CHARGEBACK'
                 ORDER BY reference, line_no
                ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING
                """)) {
            ps.setString(1, date.toString());
            ps.setObject(2, date);
            queued += ps.executeUpdate();
        }
        return queued;
    }

    public long chargebacks(Connection c, LocalDate date) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM psp_settlements WHERE business_date = ? AND type = 'CHARGEBACK'")) {
            ps.setObject(1, date);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
