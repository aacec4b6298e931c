package com.payments.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.infra.Postgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every invariant the database holds is tried here against real PostgreSQL, and must be refused. */
class SchemaConstraintsTest {
    private static Postgres.Database database;
    private Connection db;
    private UUID merchant;

    @BeforeAll
    static void migrate() {
        database = Postgres.freshDatabase("contracts");
    }

    @BeforeEach
    void connect() throws SQLException {
        db = DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
        db.setAutoCommit(true);
        merchant = UUID.fromString(queryString("INSERT INTO merchants (name) VALUES ('m') RETURNING id"));
    }

    @AfterEach
    void close() throws SQLException {
        db.close();
    }

    @Test
    void refundedAmountCannotExceedAmount() throws SQLException {
        UUID payment = capturedPayment(1000);
        exec("UPDATE payments SET refunded_amount = 1000 WHERE id = '" + payment + "'");
        assertRefused(
                "UPDATE payments SET refunded_amount = 1001 WHERE id = '" + payment + "'", "refunds_within_amount");
        assertThat(queryString("SELECT refunded_amount FROM payments WHERE id = '" + payment + "'"))
                .isEqualTo("1000");
    }

    @Test
    void amountMustBePositiveAndBounded() {
        assertRefused(paymentInsert(0), "payments_amount_check");
        assertRefused(paymentInsert(-5), "payments_amount_check");
        assertRefused(paymentInsert(1_000_000_000_001L), "payments_amount_check");
    }

    @Test
    void statusOutsideTheStateMachineIsRefused() throws SQLException {
        assertRefused(
                "INSERT INTO payments (merchant_id, order_id, amount, currency, source, status) VALUES ('" + merchant
                        + "', 'o', 10, 'EUR', 'tok_visa', 'REFUNDED')",
                "payments_status_check");
        UUID captured = capturedPayment(10);
        assertRefused(
                "UPDATE payments SET status = 'PROCESSING' WHERE id = '" + captured + "'",
                "illegal payment transition");
        assertRefused(
                "UPDATE payments SET status = 'FAILED' WHERE id = '" + captured + "'", "illegal payment transition");
        UUID failed = UUID.fromString(queryString(paymentInsert(10) + " RETURNING id"));
        exec("UPDATE payments SET status = 'FAILED' WHERE id = '" + failed + "'");
        assertRefused(
                "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_1' WHERE id = '" + failed + "'",
                "illegal payment transition");
        assertThat(queryString("SELECT count(*) FROM payment_transitions WHERE payment_id = '" + failed + "'"))
                .isEqualTo("1");
    }

    @Test
    void duplicateIdempotencyKeyPerMerchantIsRefused() throws SQLException {
        String insert = "INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ('" + merchant
                + "', 'key-1', '\\x00')";
        exec(insert);
        assertRefused(insert, "idempotency_keys_pkey");
        UUID other = UUID.fromString(queryString("INSERT INTO merchants (name) VALUES ('other') RETURNING id"));
        exec("INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ('" + other
                + "', 'key-1', '\\x00')");
        assertRefused(
                "INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ('" + merchant
                        + "', 'ключ', '\\x00')",
                "idempotency_keys_key_check");
    }

    @Test
    void idempotencyKeysAreOneTo255PrintableAsciiCharacters() throws SQLException {
        exec(keyInsert("'" + "k".repeat(255) + "'"));
        exec(keyInsert("' ~'"));
        assertRefused(keyInsert("'" + "k".repeat(256) + "'"), "idempotency_keys_key_check");
        assertRefused(keyInsert("''"), "idempotency_keys_key_check");
        assertRefused(keyInsert("E'tab\\there'"), "idempotency_keys_key_check");
        assertRefused(keyInsert("E'del\\x7F'"), "idempotency_keys_key_check");
        assertRefused(keyInsert("'café'"), "idempotency_keys_key_check");
    }

    private String keyInsert(String keyLiteral) {
        return "INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ('" + merchant + "', " + keyLiteral
                + ", '\\x00')";
    }

    @Test
    void everyLedgerInsertMustSumToZeroPerTransactionAndCurrency() throws SQLException {
        UUID tx = ledgerTransaction("balanced");
        post(tx, "psp_receivable", 500, "EUR", "merchant_payable", -500, "EUR");

        UUID unbalanced = ledgerTransaction("unbalanced");
        assertThatThrownBy(() -> post(unbalanced, "psp_receivable", 500, "EUR", "merchant_payable", -499, "EUR"))
                .hasMessageContaining("does not sum to zero");
        UUID mixed = ledgerTransaction("mixed-currencies");
        assertThatThrownBy(() -> post(mixed, "psp_receivable", 500, "EUR", "merchant_payable", -500, "USD"))
                .hasMessageContaining("does not sum to zero");
        // the legs of one transaction in two statements: the first alone is unbalanced, even inside one transaction
        db.setAutoCommit(false);
        UUID split = ledgerTransaction("split");
        assertThatThrownBy(() -> entry(split, "psp_receivable", 500, "EUR"))
                .hasMessageContaining("does not sum to zero");
        db.rollback();
        db.setAutoCommit(true);
        // one statement posting two transactions, one of them unbalanced: nothing of it is stored
        UUID second = ledgerTransaction("second");
        assertThatThrownBy(() -> exec("INSERT INTO ledger_entries (transaction_id, account, amount, currency) VALUES ('"
                        + second + "', 'psp_receivable', 10, 'EUR'), ('" + second
                        + "', 'merchant_payable', -10, 'EUR'), ('"
                        + unbalanced + "', 'psp_receivable', 1, 'EUR')"))
                .hasMessageContaining("does not sum to zero")
                .hasMessageContaining(unbalanced.toString());

        assertThat(queryString("SELECT count(*) || ':' || sum(amount) FROM ledger_entries WHERE transaction_id IN ('"
                        + tx + "', '" + unbalanced + "', '" + mixed + "', '" + second + "')"))
                .isEqualTo("2:0");
    }

    @Test
    void ledgerEntriesCannotBeUpdatedOrDeleted() throws SQLException {
        UUID tx = ledgerTransaction("immutable");
        post(tx, "psp_receivable", 700, "EUR", "merchant_payable", -700, "EUR");

        assertRefused("UPDATE ledger_entries SET amount = 1 WHERE transaction_id = '" + tx + "'", "append-only");
        assertRefused("DELETE FROM ledger_entries WHERE transaction_id = '" + tx + "'", "append-only");
        assertRefused("TRUNCATE ledger_entries CASCADE", "append-only");
        assertRefused("DELETE FROM ledger_transactions WHERE id = '" + tx + "'", "append-only");
        assertThat(queryString(
                        "SELECT sum(amount) FILTER (WHERE amount > 0) FROM ledger_entries WHERE transaction_id = '" + tx
                                + "'"))
                .isEqualTo("700");
    }

    @Test
    void ledgerBookingIsBalancedOncePerReference() throws SQLException {
        String book = "SELECT book_ledger_transaction('REFUND', 'merchant_payable', 'psp_receivable', 'r-1', '"
                + merchant + "', 'refund', 250, 'EUR', %s)";
        assertThat(queryString(book.formatted("false"))).isEqualTo("t");
        assertThat(
                        queryString(
                                """
                        SELECT string_agg(e.account || ' ' || e.amount || ' ' || e.currency, ', ' ORDER BY e.amount)
                          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'REFUND' AND t.reference = 'r-1'"""))
                .isEqualTo("psp_receivable -250 EUR, merchant_payable 250 EUR");
        // a second booking of the reference: refused, or left as it is when asked to skip booked ones
        assertRefused(book.formatted("false"), "ledger_transactions_kind_reference_key");
        assertThat(queryString(book.formatted("true"))).isEqualTo("f");
        assertRefused(
                "SELECT book_ledger_transactions('FEE', 'psp_fees', 'psp_receivable', ARRAY['f', 'f'],"
                        + " ARRAY[NULL::uuid, NULL], ARRAY['x', 'x'], ARRAY[1, 1]::bigint[], ARRAY['EUR', 'EUR'], true)",
                "distinct");
        assertThat(queryString(
                        "SELECT count(*) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id"
                                + " WHERE t.reference IN ('r-1', 'f')"))
                .isEqualTo("2");
    }

    @Test
    void enqueuedEventsKeepTheirHeaders() throws SQLException {
        exec("SELECT enqueue_event(gen_random_uuid(), 'T', 'payment-events', 'k-1', '{\"a\": 1}',"
                + " '{\"traceparent\": \"00-x\"}')");
        exec("SELECT enqueue_events(ARRAY[gen_random_uuid()], ARRAY['T'], ARRAY['payment-events'], ARRAY['k-2'],"
                + " ARRAY['{}'::jsonb], ARRAY[NULL::jsonb])");
        assertThat(queryString("SELECT string_agg(key || ' ' || headers::text, ', ' ORDER BY id) FROM outbox"
                        + " WHERE key IN ('k-1', 'k-2')"))
                .isEqualTo("k-1 {\"traceparent\": \"00-x\"}, k-2 {}");
    }

    @Test
    void refundsOnlyMoveFromPending() throws SQLException {
        UUID payment = capturedPayment(100);
        UUID refund =
                UUID.fromString(queryString("INSERT INTO refunds (payment_id, merchant_id, amount, currency) VALUES ('"
                        + payment + "', '" + merchant + "', 40, 'EUR') RETURNING id"));
        exec("UPDATE refunds SET status = 'SUCCEEDED' WHERE id = '" + refund + "'");
        assertRefused("UPDATE refunds SET status = 'FAILED' WHERE id = '" + refund + "'", "illegal refund transition");
        assertRefused("UPDATE refunds SET amount = 41 WHERE id = '" + refund + "'", "immutable");
        assertRefused("UPDATE refunds SET currency = 'USD' WHERE id = '" + refund + "'", "immutable");
        UUID other = UUID.fromString(queryString("INSERT INTO merchants (name) VALUES ('other') RETURNING id"));
        assertRefused("UPDATE refunds SET merchant_id = '" + other + "' WHERE id = '" + refund + "'", "immutable");
    }

    private UUID capturedPayment(long amount) throws SQLException {
        UUID id = UUID.fromString(queryString(paymentInsert(amount) + " RETURNING id"));
        exec("UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_" + id + "' WHERE id = '" + id + "'");
        return id;
    }

    private String paymentInsert(long amount) {
        return "INSERT INTO payments (merchant_id, order_id, amount, currency, source) VALUES ('" + merchant
                + "', 'order-1', " + amount + ", 'EUR', 'tok_visa')";
    }

    private UUID ledgerTransaction(String reference) throws SQLException {
        return UUID.fromString(queryString("INSERT INTO ledger_transactions (kind, reference) VALUES ('ADJUSTMENT', '"
                + reference + "') RETURNING id"));
    }

    /** Two entries of one ledger transaction in one INSERT, as every writer posts them. */
    private void post(
            UUID tx, String account1, long amount1, String currency1, String account2, long amount2, String currency2)
            throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(
                "INSERT INTO ledger_entries (transaction_id, account, amount, currency) VALUES (?, ?, ?, ?), (?, ?, ?, ?)")) {
            ps.setObject(1, tx);
            ps.setString(2, account1);
            ps.setLong(3, amount1);
            ps.setString(4, currency1);
            ps.setObject(5, tx);
            ps.setString(6, account2);
            ps.setLong(7, amount2);
            ps.setString(8, currency2);
            ps.executeUpdate();
        }
    }

    private void entry(UUID tx, String account, long amount, String currency) throws SQLException {
        try (PreparedStatement ps = db.prepareStatement(
                "INSERT INTO ledger_entries (transaction_id, account, amount, currency) VALUES (?, ?, ?, ?)")) {
            ps.setObject(1, tx);
            ps.setString(2, account);
            ps.setLong(3, amount);
            ps.setString(4, currency);
            ps.executeUpdate();
        }
    }

    private void assertRefused(String sql, String reason) {
        assertThatThrownBy(() -> exec(sql)).isInstanceOf(SQLException.class).hasMessageContaining(reason);
    }

    private void exec(String sql) throws SQLException {
        try (Statement st = db.createStatement()) {
            st.execute(sql);
        }
    }

    private String queryString(String sql) throws SQLException {
        try (Statement st = db.createStatement();
                var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
