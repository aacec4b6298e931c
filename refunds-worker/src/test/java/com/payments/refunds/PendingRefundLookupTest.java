package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.Postgres;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The worker's statements on one refund read that refund, not the PENDING backlog (V103): with the statistics of
 * {@code refunds} taken while nothing was PENDING (autovacuum after a burst was executed) and then a backlog of {@value #BACKLOG}
 * PENDING refunds, the claim (refund-command-claim.sql, here of three commands), {@code settle_refund} and the hand-off
 * (refund-schedule-now.sql) read index entries of the primary key only, and never scan the table. Before V103 the
 * claim's generic plan walked the partial index of every PENDING refund with the id as a filter (3.5 ms per claim at a
 * backlog of 4,000 in bench/refund-execution.sh); the hand-off's {@code next_attempt_at IS NULL} walked V30's index of
 * the unscheduled ones (1,000 entries here).
 * Measured by the index entries and scanned rows PostgreSQL counts ({@code pg_stat_user_indexes.idx_tup_read}, {@code
 * pg_stat_user_tables.seq_tup_read}), not by time.
 */
class PendingRefundLookupTest {
    private static final int BACKLOG = 2000;

    private static Postgres.Database db;
    private static String merchant;
    private static String payment;

    @BeforeAll
    static void backlogAfterStatisticsOfAQuietHour() throws SQLException {
        db = Postgres.freshDatabase("pendinglookup");
        try (Connection c = connect()) {
            exec(c, "ALTER TABLE refunds SET (autovacuum_enabled = false)");
            merchant = query(c, "INSERT INTO merchants (name) VALUES ('lookup') RETURNING id");
            payment = query(
                    c,
                    "INSERT INTO payments (merchant_id, order_id, amount, currency, source) VALUES ('" + merchant
                            + "', 'o', 1000000, 'EUR', 'tok_visa') RETURNING id");
            exec(
                    c,
                    "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_lookup', refunded_amount = "
                            + (3 * BACKLOG) + " WHERE id = '" + payment + "'");
            // an earlier burst, executed, then vacuumed: the partial indexes have pages and no entries
            exec(
                    c,
                    "INSERT INTO refunds (payment_id, merchant_id, amount, currency) SELECT '" + payment + "', '"
                            + merchant + "', 1, 'EUR' FROM generate_series(1, " + BACKLOG + ")");
            exec(c, "UPDATE refunds SET status = 'SUCCEEDED', completed_at = now()");
            exec(c, "VACUUM ANALYZE refunds");
            // the backlog: half of it leased or scheduled for a retry, half never tried
            exec(
                    c,
                    "INSERT INTO refunds (payment_id, merchant_id, amount, currency, next_attempt_at) SELECT '"
                            + payment
                            + "', '" + merchant + "', 1, 'EUR', CASE WHEN i % 2 = 0 THEN now() + interval '1 hour' END"
                            + " FROM generate_series(1, " + BACKLOG + ") AS i");
        }
    }

    @Test
    void theClaimReadsItsRefundsOnly() throws Exception {
        List<UUID> refunds = pendingRefunds(3);
        String claim = resource("/sql/refund-command-claim.sql");
        long read = backlogEntriesRead(c -> {
            try (PreparedStatement st = c.prepareStatement(claim)) {
                int n = refunds.size();
                st.setArray(
                        1,
                        c.createArrayOf(
                                "uuid",
                                Stream.generate(UUID::randomUUID).limit(n).toArray()));
                st.setArray(2, c.createArrayOf("uuid", refunds.toArray()));
                st.setArray(
                        3,
                        c.createArrayOf(
                                "uuid",
                                Collections.nCopies(n, UUID.fromString(payment)).toArray()));
                st.setArray(
                        4,
                        c.createArrayOf(
                                "uuid",
                                Collections.nCopies(n, UUID.fromString(merchant))
                                        .toArray()));
                st.setArray(
                        5, c.createArrayOf("int8", Collections.nCopies(n, 1L).toArray()));
                st.setArray(
                        6, c.createArrayOf("text", Collections.nCopies(n, "EUR").toArray()));
                st.setArray(
                        7,
                        c.createArrayOf(
                                "text", Collections.nCopies(n, "ch_lookup").toArray()));
                st.setString(8, "refunds-worker");
                st.setLong(9, 30_000);
                try (ResultSet rs = st.executeQuery()) {
                    for (UUID refund : refunds) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getObject("id")).isEqualTo(refund);
                        assertThat(rs.getBoolean("claimed")).isTrue();
                    }
                    assertThat(rs.next()).isFalse();
                }
            }
        });
        assertThat(read)
                .as("index entries of PENDING refunds read, or rows of a scan of refunds, by one claim of three")
                .isLessThan(10);
    }

    @Test
    void settleRefundReadsOneRefund() throws Exception {
        String refund = pendingRefund();
        long read = backlogEntriesRead(c -> assertThat(query(
                        c, "SELECT settle_refund('" + refund + "', 'SUCCEEDED', 're_lookup', NULL, 'test', '{}')"))
                .isEqualTo("t"));
        assertThat(read)
                .as("index entries of PENDING refunds read by one settle_refund")
                .isLessThan(10);
    }

    @Test
    void theHandOffReadsOneRefund() throws Exception {
        String refund = pendingRefund();
        String scheduleNow = resource("/sql/refund-schedule-now.sql");
        long read = backlogEntriesRead(c -> {
            try (PreparedStatement st = c.prepareStatement(scheduleNow)) {
                st.setObject(1, UUID.fromString(refund));
                assertThat(st.executeUpdate()).isEqualTo(1);
            }
        });
        assertThat(read)
                .as("index entries of PENDING refunds read, or rows of a scan of refunds, by one hand-off")
                .isLessThan(10);
    }

    private interface Work {
        void run(Connection c) throws Exception;
    }

    /**
     * Index entries read from the indexes of {@code refunds} other than its primary key, and rows read by scans of the
     * table, while {@code work} runs with generic plans (what a prepared statement uses after its fifth execution, and
     * what every plan is here).
     */
    private static long backlogEntriesRead(Work work) throws Exception {
        try (Connection c = connect()) {
            exec(c, "SET plan_cache_mode = force_generic_plan");
            long before = backlogRowsRead(c);
            work.run(c);
            return backlogRowsRead(c) - before;
        }
    }

    private static long backlogRowsRead(Connection c) throws SQLException {
        query(c, "SELECT pg_stat_force_next_flush()");
        return Long.parseLong(query(
                c,
                "SELECT sum(idx_tup_read) + (SELECT seq_tup_read FROM pg_stat_user_tables WHERE relname = 'refunds')"
                        + " FROM pg_stat_user_indexes WHERE relname = 'refunds' AND indexrelname <> 'refunds_pkey'"));
    }

    /** A PENDING refund nobody tried yet, one of the backlog. */
    private static String pendingRefund() throws SQLException {
        return pendingRefunds(1).get(0).toString();
    }

    /** PENDING refunds nobody tried yet, of the backlog (a claim or a settlement takes them out of it). */
    private static List<UUID> pendingRefunds(int count) throws SQLException {
        List<UUID> refunds = new ArrayList<>();
        try (Connection c = connect();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM refunds WHERE status = 'PENDING' AND next_attempt_at"
                        + " IS NULL AND attempts = 0 ORDER BY id LIMIT " + count)) {
            while (rs.next()) {
                refunds.add(rs.getObject(1, UUID.class));
            }
        }
        return refunds;
    }

    private static String resource(String path) throws IOException {
        try (InputStream in = PendingRefundLookupTest.class.getResourceAsStream(path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\$\\d+", "?");
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
    }

    private static void exec(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static String query(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
