package com.payments.recon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/** Test data written by the tests: merchants, payments, refunds, settlement files, table snapshots. */
final class Fixture {
    record Line(
            String pspReference, String type, String reference, long amount, long fee, String currency, Instant at) {
        String csv() {
            return String.join(
                    ",",
                    pspReference,
                    type,
                    reference == null ? "" : reference,
                    Long.toString(amount),
                    Long.toString(fee),
                    currency,
                    at.toString());
        }
    }

    private final DataSource ds;
    private final Path dir;
    final String merchantId;

    Fixture(DataSource ds) {
        this.ds = ds;
        try {
            this.dir = Files.createTempDirectory("settlements");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.merchantId = queryOne("INSERT INTO merchants (name) VALUES ('recon test') RETURNING id::text");
    }

    /** The {@code --source} of this fixture's files. */
    String source() {
        return dir.resolve("{date}.csv").toString();
    }

    static Instant at(LocalDate date, String time) {
        return date.atTime(java.time.LocalTime.parse(time)).toInstant(ZoneOffset.UTC);
    }

    static long fee(long amount) {
        return (amount * 290 + 5_000) / 10_000 + 30;
    }

    String captured(long amount, String currency, Instant capturedAt) {
        String id = UUID.randomUUID().toString();
        return captured(id, amount, currency, "ch_" + id, capturedAt);
    }

    /** A CAPTURED payment with the given id and PSP charge id, recorded as captured at {@code capturedAt}. */
    String captured(String id, long amount, String currency, String pspReference, Instant capturedAt) {
        update(
                """
                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, psp_reference,
                                      captured_at)
                VALUES (?::uuid, ?::uuid, 'o-' || ?, ?, ?, 'tok_visa', 'CAPTURED', ?, ?::timestamptz)
                """,
                id,
                merchantId,
                id,
                amount,
                currency,
                pspReference,
                capturedAt.toString());
        return id;
    }

    /** How the tests reach each state of a MANUAL payment from AUTHORIZING, by the schema's transitions only (V98). */
    private static final Map<String, List<String>> MANUAL_PATHS = Map.of(
            "AUTHORIZING", List.of(),
            "AUTHORIZED", List.of("AUTHORIZED"),
            "CAPTURING", List.of("AUTHORIZED", "CAPTURING"),
            "CAPTURED", List.of("AUTHORIZED", "CAPTURING", "CAPTURED"),
            "CANCELING", List.of("AUTHORIZED", "CANCELING"),
            "CANCELED", List.of("AUTHORIZED", "CANCELING", "CANCELED"),
            "EXPIRING", List.of("AUTHORIZED", "EXPIRING"),
            "EXPIRED", List.of("AUTHORIZED", "EXPIRING", "EXPIRED"));

    /**
     * A MANUAL payment (authorize now, capture later) of {@code authorized}, inserted AUTHORIZING and moved step by
     * step to {@code status} as the services move it: the PSP's reference {@code ch_<id>} with the authorization, a
     * capture of {@code captured} (unused before CAPTURING) and, when it ends CAPTURED at {@code capturedAt}, its
     * CAPTURE ledger transaction of the captured amount in the same transaction.
     */
    String manual(String status, long authorized, long captured, String currency, Instant capturedAt) {
        String id = UUID.randomUUID().toString();
        update(
                """
                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, capture_method, status)
                VALUES (?::uuid, ?::uuid, 'o-' || ?, ?, ?, 'tok_visa', 'MANUAL', 'AUTHORIZING')
                """,
                id,
                merchantId,
                id,
                authorized,
                currency);
        for (String step : MANUAL_PATHS.get(status)) {
            switch (step) {
                case "AUTHORIZED" ->
                    update(
                            "UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'ch_' || id WHERE id = ?::uuid",
                            id);
                case "CAPTURING" ->
                    update(
                            "UPDATE payments SET status = 'CAPTURING', captured_amount = ? WHERE id = ?::uuid",
                            captured,
                            id);
                case "CAPTURED" ->
                    inTransaction(c -> {
                        try (PreparedStatement ps = c.prepareStatement(
                                "UPDATE payments SET status = 'CAPTURED', captured_at = ?::timestamptz WHERE id = ?::uuid")) {
                            bind(ps, capturedAt.toString(), id);
                            ps.executeUpdate();
                        }
                        try (PreparedStatement ps = c.prepareStatement(
                                """
                            SELECT book_ledger_transaction('CAPTURE', 'psp_receivable', 'merchant_payable', ?, ?::uuid,
                                                           'payment captured', ?, ?, false)
                            """)) {
                            bind(ps, id, merchantId, captured, currency);
                            ps.execute();
                        }
                    });
                default -> update("UPDATE payments SET status = ? WHERE id = ?::uuid", step, id);
            }
        }
        return id;
    }

    interface Work {
        void run(Connection c) throws SQLException;
    }

    /** {@code work} on one connection in one transaction (the schema's deferred checks run at its commit). */
    void inTransaction(Work work) {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                work.run(c);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    String payment(String status, long amount, String currency) {
        String id = UUID.randomUUID().toString();
        update(
                """
                INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status)
                VALUES (?::uuid, ?::uuid, 'o-' || ?, ?, ?, 'tok_visa', ?)
                """,
                id,
                merchantId,
                id,
                amount,
                currency,
                status);
        return id;
    }

    String refund(String paymentId, long amount, String currency, Instant completedAt) {
        String id = UUID.randomUUID().toString();
        return refund(id, paymentId, amount, currency, "SUCCEEDED", "re_" + id, completedAt);
    }

    /** A refund with the given id, status (SUCCEEDED or FAILED) and PSP refund id, completed at {@code completedAt}. */
    String refund(
            String id,
            String paymentId,
            long amount,
            String currency,
            String status,
            String pspReference,
            Instant completedAt) {
        if ("SUCCEEDED".equals(status)) {
            update("UPDATE payments SET refunded_amount = refunded_amount + ? WHERE id = ?::uuid", amount, paymentId);
        }
        update(
                """
                INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, status, psp_reference, completed_at)
                VALUES (?::uuid, ?::uuid, ?::uuid, ?, ?, ?, ?, ?::timestamptz)
                """,
                id,
                paymentId,
                merchantId,
                amount,
                currency,
                status,
                pspReference,
                completedAt.toString());
        return id;
    }

    /** Where the settlement file of {@code date} is (the sandbox format or a Stripe report written by the test). */
    java.nio.file.Path file(LocalDate date) {
        return dir.resolve(date + ".csv");
    }

    /**
     * Moves every recorded reconciliation run and break back in time, as if they had happened {@code ago} earlier: the
     * next run then comes that much later than them.
     */
    void passTime(java.time.Duration ago) {
        passTime(ds, ago);
    }

    static void passTime(DataSource ds, java.time.Duration ago) {
        try (Connection c = ds.getConnection()) {
            passTime(c, ago);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Shifts every timestamptz column of recon_runs and recon_breaks by {@code ago} into the past. */
    static void passTime(Connection c, java.time.Duration ago) throws SQLException {
        List<String[]> columns = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                        """
                        SELECT table_name, column_name FROM information_schema.columns
                         WHERE table_schema = current_schema() AND table_name IN ('recon_runs', 'recon_breaks')
                           AND data_type = 'timestamp with time zone'
                        """);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                columns.add(new String[] {rs.getString(1), rs.getString(2)});
            }
        }
        for (String[] column : columns) {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE " + column[0] + " SET " + column[1] + " = " + column[1] + " - ? * interval '1 second'")) {
                ps.setLong(1, ago.toSeconds());
                ps.executeUpdate();
            }
        }
    }

    static Line charge(String paymentId, long amount, String currency, Instant at) {
        return new Line("ch_" + paymentId, "CHARGE", paymentId, amount, fee(amount), currency, at);
    }

    static Line refundLine(String refundId, long amount, String currency, Instant at) {
        return new Line("re_" + refundId, "REFUND", refundId, amount, 0, currency, at);
    }

    void writeFile(LocalDate date, List<Line> lines) {
        StringBuilder sb = new StringBuilder("psp_reference,type,reference,amount,fee,currency,settled_at\n");
        lines.forEach(l -> sb.append(l.csv()).append('\n'));
        writeRaw(date, sb.toString());
    }

    void writeRaw(LocalDate date, String content) {
        try {
            Files.writeString(dir.resolve(date + ".csv"), content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String queryOne(String sql, Object... args) {
        List<List<String>> rows = rows(sql, args);
        return rows.isEmpty() ? null : rows.get(0).get(0);
    }

    List<List<String>> rows(String sql, Object... args) {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            List<List<String>> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                ResultSetMetaData md = rs.getMetaData();
                while (rs.next()) {
                    List<String> row = new ArrayList<>();
                    for (int i = 1; i <= md.getColumnCount(); i++) {
                        row.add(rs.getString(i));
                    }
                    rows.add(row);
                }
            }
            return rows;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    int update(String sql, Object... args) {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, args);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            ps.setObject(i + 1, args[i]);
        }
    }

    /**
     * Everything a run may change except its own bookkeeping (recon_runs, and the break columns that count sightings):
     * a re-run of a date must leave this identical.
     */
    List<List<String>> snapshot() {
        List<List<String>> all = new ArrayList<>();
        for (String sql : List.of(
                "SELECT * FROM psp_settlements ORDER BY business_date, line_no",
                "SELECT * FROM payments ORDER BY id",
                "SELECT * FROM payment_transitions ORDER BY id",
                "SELECT * FROM refunds ORDER BY id",
                "SELECT * FROM ledger_transactions ORDER BY id",
                "SELECT * FROM ledger_entries ORDER BY id",
                "SELECT * FROM outbox ORDER BY id",
                "SELECT * FROM operations_queue ORDER BY id",
                """
                SELECT id, business_date, break_type, reference, psp_reference, internal_amount, psp_amount, currency,
                       status, first_run_id, created_at, reported_at, resolved_at, resolution
                  FROM recon_breaks ORDER BY id
                """)) {
            all.add(List.of("-- " + sql));
            all.addAll(rows(sql));
        }
        return all;
    }
}
