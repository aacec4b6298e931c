package com.payments.api;

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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A statement on one AUTHORIZED payment reads that payment, not every AUTHORIZED one (V105), and the expiry's claim
 * still reads its partial index, not the table. With the statistics of {@code payments} taken while none was
 * AUTHORIZED and then {@value #HOLDS} authorizations, under generic plans (what a prepared statement runs after its
 * fifth execution). Before V105 the guarded move that starts a capture or cancel read all {@value #HOLDS} through
 * V102's index. Measured by what PostgreSQL counts ({@code pg_stat_user_indexes}, {@code pg_stat_user_tables}).
 */
class AuthorizedPaymentLookupTest {
    private static final int HOLDS = 2000;

    private static Postgres.Database db;
    private static String merchant;

    @BeforeAll
    static void holdsAfterStatisticsOfNone() throws SQLException {
        db = Postgres.freshDatabase("authorizedlookup");
        try (Connection c = connect()) {
            exec(c, "ALTER TABLE payments SET (autovacuum_enabled = false)");
            merchant = query(c, "INSERT INTO merchants (name) VALUES ('lookup') RETURNING id");
            exec(
                    c,
                    "INSERT INTO payments (merchant_id, order_id, amount, currency, source, capture_method, status)"
                            + " SELECT '" + merchant + "', 'o' || i, 1000, 'EUR', 'tok_visa', 'MANUAL', 'AUTHORIZING'"
                            + " FROM generate_series(1, " + HOLDS + ") AS i");
            exec(c, "VACUUM ANALYZE payments");
            exec(c, "UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'pi_' || id");
        }
    }

    /** The guarded move a capture or cancel starts with (PaymentRepository.startMove), on one of the holds. */
    @Test
    void aCaptureStartReadsOnePayment() throws Exception {
        String payment;
        try (Connection c = connect()) {
            payment = query(c, "SELECT id FROM payments WHERE status = 'AUTHORIZED' ORDER BY id LIMIT 1");
        }
        long[] read = readsDuring(c -> {
            try (PreparedStatement st =
                    c.prepareStatement("UPDATE payments SET status = ?, captured_amount = ?, last_error = NULL,"
                            + " next_attempt_at = now() + make_interval(secs => ?)"
                            + " WHERE id = ?::uuid AND merchant_id = ?::uuid AND status = 'AUTHORIZED'")) {
                st.setString(1, "CAPTURING");
                st.setLong(2, 1000);
                st.setDouble(3, 60);
                st.setString(4, payment);
                st.setString(5, merchant);
                assertThat(st.executeUpdate()).isEqualTo(1);
            }
        });
        assertThat(read[0]).as("index entries read beside the primary key's").isLessThan(10);
    }

    /** The expiry's claim (expiry-claim.sql) of the oldest holds: through V105's index, never the whole table. */
    @Test
    void theExpiryClaimReadsItsIndex() throws Exception {
        String claim = resource("/sql/expiry-claim.sql");
        long[] read = readsDuring(c -> {
            exec(c, "PREPARE expiry_claim AS " + claim);
            try (Statement st = c.createStatement();
                    ResultSet claimed = st.executeQuery("EXECUTE expiry_claim(0, 5, 60, 'test')")) {
                int rows = 0;
                while (claimed.next()) {
                    rows++;
                }
                assertThat(rows).isEqualTo(5);
            }
        });
        assertThat(read[1]).as("sequential scans of payments").isZero();
        assertThat(read[2]).as("scans of payments_expiry_due").isPositive();
    }

    /** The resolver's claim (resolver-claim.sql), whose EXPIRING arm V105's index now serves: no table scan. */
    @Test
    void theResolverClaimReadsItsIndexes() throws Exception {
        String claim = resource("/sql/resolver-claim.sql");
        long[] read = readsDuring(c -> {
            exec(c, "PREPARE resolver_claim AS " + claim);
            exec(c, "EXECUTE resolver_claim(5, 60)");
        });
        assertThat(read[1]).as("sequential scans of payments").isZero();
        assertThat(read[2]).as("scans of payments_expiry_due").isPositive();
    }

    private interface Work {
        void run(Connection c) throws Exception;
    }

    /**
     * What {@code work} made PostgreSQL read, under generic plans: index entries of the indexes of {@code payments}
     * other than its primary key, sequential scans of {@code payments}, scans of {@code payments_expiry_due}.
     */
    private static long[] readsDuring(Work work) throws Exception {
        try (Connection c = connect()) {
            exec(c, "SET plan_cache_mode = force_generic_plan");
            long[] before = reads(c);
            work.run(c);
            long[] after = reads(c);
            return new long[] {after[0] - before[0], after[1] - before[1], after[2] - before[2]};
        }
    }

    private static long[] reads(Connection c) throws SQLException {
        query(c, "SELECT pg_stat_force_next_flush()");
        return new long[] {
            Long.parseLong(query(
                    c,
                    "SELECT sum(idx_tup_read) FROM pg_stat_user_indexes WHERE relname = 'payments'"
                            + " AND indexrelname <> 'payments_pkey'")),
            Long.parseLong(query(c, "SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'payments'")),
            Long.parseLong(query(
                    c,
                    "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes"
                            + " WHERE indexrelname = 'payments_expiry_due'"))
        };
    }

    private static String resource(String path) throws IOException {
        try (InputStream in = AuthorizedPaymentLookupTest.class.getResourceAsStream(path)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
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
