package com.payments.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.infra.Postgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code settle_refund} (V95), the one way a refund is settled, called as the services' role {@code payments_app}: a
 * refund settles once, whoever calls and however many call at the same time.
 */
class SettleRefundTest {
    private static final int CALLERS = 8;

    private static Postgres.Database app;

    @BeforeAll
    static void migrate() {
        app = Postgres.freshDatabase("settlerefund").asApp();
    }

    /** Concurrent calls with both outcomes: exactly one settles, and only its effects exist. */
    @Test
    void concurrentCallsSettleOnce() throws Exception {
        UUID refund = pendingRefund(40);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
        try {
            List<Future<String>> calls = new ArrayList<>();
            for (int i = 0; i < CALLERS; i++) {
                String status = i % 2 == 0 ? "SUCCEEDED" : "FAILED";
                calls.add(pool.submit((Callable<String>) () -> {
                    try (Connection db = connect()) {
                        start.await();
                        return settle(db, refund, status) ? status : null;
                    }
                }));
            }
            start.countDown();
            List<String> won = new ArrayList<>();
            for (Future<String> call : calls) {
                if (call.get() != null) {
                    won.add(call.get());
                }
            }
            assertThat(won).hasSize(1);
            String status = won.get(0);
            try (Connection db = connect()) {
                assertThat(query(db, "SELECT status FROM refunds WHERE id = '" + refund + "'"))
                        .isEqualTo(status);
                assertThat(query(db, "SELECT count(*) FROM outbox WHERE payload ->> 'refundId' = '" + refund + "'"))
                        .isEqualTo("1");
                assertThat(query(db, "SELECT event_type FROM outbox WHERE payload ->> 'refundId' = '" + refund + "'"))
                        .isEqualTo(status.equals("SUCCEEDED") ? "RefundSucceeded" : "RefundFailed");
                assertThat(query(db, "SELECT count(*) FROM ledger_transactions WHERE reference = '" + refund + "'"))
                        .isEqualTo(status.equals("SUCCEEDED") ? "1" : "0");
                assertThat(query(
                                db,
                                "SELECT p.refunded_amount FROM payments p JOIN refunds r ON r.payment_id = p.id"
                                        + " WHERE r.id = '" + refund + "'"))
                        .isEqualTo(status.equals("SUCCEEDED") ? "40" : "0");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A success: the refund's ledger transaction, its event with the contract's fields, the stuck item resolved. */
    @Test
    void successBooksTheLedgerAndWritesTheEvent() throws SQLException {
        UUID refund = pendingRefund(25);
        try (Connection db = connect()) {
            exec(
                    db,
                    "INSERT INTO operations_queue (subject_type, subject_id, reason, details) VALUES ('refund', '"
                            + refund + "', 'refund_pending_too_long', '{}')");
            assertThat(settle(db, refund, "SUCCEEDED")).isTrue();
            assertThat(settle(db, refund, "SUCCEEDED")).isFalse();
            assertThat(query(
                            db,
                            "SELECT string_agg(e.account || ' ' || e.amount || ' ' || e.currency, ',' ORDER BY e.account)"
                                    + " FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id"
                                    + " WHERE t.kind = 'REFUND' AND t.reference = '" + refund + "'"))
                    .isEqualTo("merchant_payable 25 EUR,psp_receivable -25 EUR");
            assertThat(query(
                            db,
                            "SELECT payload - 'eventId' - 'occurredAt' - 'paymentId' - 'merchantId' FROM outbox"
                                    + " WHERE payload ->> 'refundId' = '" + refund + "'"))
                    .isEqualTo("{\"type\": \"RefundSucceeded\", \"amount\": 25, \"currency\": \"EUR\", \"metadata\":"
                            + " {\"k\": \"v\"}, \"refundId\": \"" + refund + "\", \"pspReference\": \"re_1\"}");
            assertThat(query(
                            db,
                            "SELECT (payload ->> 'eventId')::uuid = event_id AND (payload ->> 'paymentId') = key"
                                    + " AND topic = 'payment-events' AND headers = '{\"traceparent\": \"00-t\"}'"
                                    + " FROM outbox WHERE payload ->> 'refundId' = '" + refund + "'"))
                    .isEqualTo("t");
            assertThat(query(
                            db,
                            "SELECT status || ' ' || (details ->> 'resolution') FROM operations_queue WHERE subject_id = '"
                                    + refund + "'"))
                    .isEqualTo("RESOLVED test: SUCCEEDED");
        }
    }

    @Test
    void onlySucceededOrFailed() throws SQLException {
        UUID refund = pendingRefund(5);
        try (Connection db = connect()) {
            assertThatThrownBy(() -> settle(db, refund, "PENDING")).hasMessageContaining("SUCCEEDED or FAILED");
            assertThat(query(db, "SELECT status FROM refunds WHERE id = '" + refund + "'"))
                    .isEqualTo("PENDING");
        }
    }

    /** A CAPTURED payment of 100 EUR with a PENDING refund of {@code amount} reserved on it. */
    private static UUID pendingRefund(long amount) throws SQLException {
        try (Connection db = connect()) {
            String merchant = query(db, "INSERT INTO merchants (name) VALUES ('settle') RETURNING id");
            String payment = query(
                    db,
                    "INSERT INTO payments (merchant_id, order_id, amount, currency, source) VALUES ('" + merchant
                            + "', 'o', 100, 'EUR', 'tok_visa') RETURNING id");
            exec(
                    db,
                    "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_" + payment + "', refunded_amount = "
                            + amount + " WHERE id = '" + payment + "'");
            return UUID.fromString(query(
                    db,
                    "INSERT INTO refunds (payment_id, merchant_id, amount, currency, metadata) VALUES ('" + payment
                            + "', '" + merchant + "', " + amount + ", 'EUR', '{\"k\":\"v\"}') RETURNING id"));
        }
    }

    private static boolean settle(Connection db, UUID refund, String status) throws SQLException {
        boolean succeeded = status.equals("SUCCEEDED");
        try (PreparedStatement st = db.prepareStatement("SELECT settle_refund(?, ?, ?, ?, 'test', ?::jsonb)")) {
            st.setObject(1, refund);
            st.setString(2, status);
            st.setString(3, succeeded ? "re_1" : null);
            st.setString(4, succeeded ? null : "declined");
            st.setString(5, "{\"traceparent\":\"00-t\"}");
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(app.jdbcUrl(), app.user(), app.password());
    }

    private static void exec(Connection db, String sql) throws SQLException {
        try (Statement st = db.createStatement()) {
            st.execute(sql);
        }
    }

    private static String query(Connection db, String sql) throws SQLException {
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
