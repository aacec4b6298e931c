package com.payments.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.infra.Postgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The services' role {@code payments_app} (migration V79, docs/deployment.md "Database roles"): exactly the grants
 * decided for each table, and none of the owner's powers (DDL, TRUNCATE, DISABLE TRIGGER, replication role).
 */
class ApplicationRoleTest {

    /**
     * What payments_app may do on each table of the schema, decided table by table (V79). A table missing here fails
     * {@link #everyTableHasExactlyTheDecidedGrants()}: its migration must grant what the services need, and this list
     * must say so.
     */
    private static final Map<String, String> DECIDED = new TreeMap<>(Map.ofEntries(
            Map.entry("console_sessions", "SELECT, INSERT, UPDATE, DELETE"),
            Map.entry("consumed_events", "SELECT, INSERT, DELETE, UPDATE(consumed_at)"),
            Map.entry("flyway_schema_history", "SELECT"),
            Map.entry("idempotency_keys", "SELECT, INSERT, UPDATE, DELETE"),
            Map.entry("idempotency_replays", "SELECT, INSERT, DELETE"),
            Map.entry("ledger_entries", "SELECT, INSERT"),
            Map.entry("ledger_transactions", "SELECT, INSERT"),
            Map.entry("merchant_api_keys", "SELECT, INSERT, UPDATE(revoked_at)"),
            Map.entry("merchant_events", "SELECT, INSERT, DELETE"),
            Map.entry("merchants", "SELECT, INSERT"),
            Map.entry("operations_queue", "SELECT, INSERT, UPDATE"),
            Map.entry("operator_audit", "SELECT, INSERT"),
            Map.entry("outbox", "SELECT, INSERT, DELETE, UPDATE(sent_at)"),
            Map.entry("outbox_relay_state", "SELECT, UPDATE"),
            Map.entry("payment_event_versions", "SELECT, INSERT, UPDATE"),
            Map.entry("payment_transitions", "SELECT, INSERT"),
            Map.entry("payments", "SELECT, INSERT, UPDATE, DELETE"),
            Map.entry("psp_calls", "SELECT, INSERT"),
            Map.entry("psp_settlements", "SELECT, INSERT, DELETE"),
            Map.entry("psp_webhook_events", "SELECT, INSERT, UPDATE"),
            Map.entry("recon_breaks", "SELECT, INSERT, UPDATE"),
            Map.entry("recon_runs", "SELECT, INSERT, UPDATE"),
            Map.entry("refund_dead_letters", "SELECT, INSERT"),
            Map.entry("refunds", "SELECT, INSERT, UPDATE"),
            Map.entry("webhook_deliveries", "SELECT, INSERT, UPDATE"),
            Map.entry("webhook_delivery_attempts", "SELECT, INSERT"),
            Map.entry("webhook_endpoint_secrets", "SELECT, INSERT, UPDATE, DELETE"),
            Map.entry("webhook_endpoints", "SELECT, INSERT, UPDATE")));

    private static Postgres.Database owner;
    private Connection app;

    @BeforeAll
    static void migrate() {
        owner = Postgres.freshDatabase("approle");
    }

    @BeforeEach
    void connectAsApp() throws SQLException {
        Postgres.Database login = owner.asApp();
        app = DriverManager.getConnection(login.jdbcUrl(), login.user(), login.password());
    }

    @AfterEach
    void close() throws SQLException {
        app.close();
    }

    @Test
    void everyTableHasExactlyTheDecidedGrants() throws SQLException {
        Map<String, String> actual = new TreeMap<>();
        try (Connection db = DriverManager.getConnection(owner.jdbcUrl(), owner.user(), owner.password());
                Statement st = db.createStatement();
                ResultSet tables = st.executeQuery(
                        """
                        SELECT c.oid, c.relname FROM pg_class c
                         WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')""")) {
            Map<String, Long> oids = new TreeMap<>();
            while (tables.next()) {
                oids.put(tables.getString(2), tables.getLong(1));
            }
            for (var table : oids.entrySet()) {
                actual.put(table.getKey(), grantsOf(db, table.getValue()));
            }
        }
        assertThat(actual).isEqualTo(DECIDED);
    }

    /** "SELECT, INSERT, ..., UPDATE(col, ...)": table privileges, then UPDATE of single columns when not of all. */
    private static String grantsOf(Connection db, long oid) throws SQLException {
        List<String> grants = new ArrayList<>();
        for (String privilege : List.of("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")) {
            if (bool(db, "SELECT has_table_privilege('payments_app', " + oid + "::oid, '" + privilege + "')")) {
                grants.add(privilege);
            }
        }
        if (!grants.contains("UPDATE")) {
            try (Statement st = db.createStatement();
                    ResultSet rs = st.executeQuery(
                            """
                            SELECT string_agg(attname, ', ' ORDER BY attnum) FROM pg_attribute
                             WHERE attrelid = %d AND attnum > 0 AND NOT attisdropped
                               AND has_column_privilege('payments_app', attrelid, attnum, 'UPDATE')"""
                                    .formatted(oid))) {
                rs.next();
                if (rs.getString(1) != null) {
                    grants.add("UPDATE(" + rs.getString(1) + ")");
                }
            }
        }
        return String.join(", ", grants);
    }

    @Test
    void ownsNothingAndIsNoSuperuser() throws SQLException {
        assertThat(
                        queryString(
                                "SELECT rolsuper OR rolbypassrls OR rolcreaterole OR rolcreatedb FROM pg_roles WHERE rolname = 'payments_app'"))
                .isEqualTo("f");
        assertThat(queryString("SELECT count(*) FROM pg_class WHERE relowner = 'payments_app'::regrole"))
                .isEqualTo("0");
        assertThat(queryString("SELECT count(*) FROM pg_proc WHERE proowner = 'payments_app'::regrole"))
                .isEqualTo("0");
    }

    @Test
    void cannotDisableTheLedgerTriggersNorBypassThem() {
        assertDenied("ALTER TABLE ledger_entries DISABLE TRIGGER ALL", "must be owner");
        assertDenied("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only", "must be owner");
        assertDenied("ALTER TABLE payments DISABLE TRIGGER payments_guard_transition", "must be owner");
        assertDenied("SET session_replication_role = replica", "permission denied");
    }

    @Test
    void cannotUpdateDeleteOrTruncateTheLedger() throws SQLException {
        String tx = bookedTransaction();
        assertDenied("UPDATE ledger_entries SET amount = amount * 2 WHERE transaction_id = '" + tx + "'", "permission");
        assertDenied("DELETE FROM ledger_entries WHERE transaction_id = '" + tx + "'", "permission");
        assertDenied("TRUNCATE ledger_entries CASCADE", "permission");
        assertDenied("UPDATE ledger_transactions SET description = 'x' WHERE id = '" + tx + "'", "permission");
        assertDenied("DELETE FROM ledger_transactions WHERE id = '" + tx + "'", "permission");
        assertDenied("DELETE FROM payment_transitions", "permission");
        assertThat(queryString("SELECT sum(abs(amount)) FROM ledger_entries WHERE transaction_id = '" + tx + "'"))
                .isEqualTo("200");
    }

    @Test
    void hasNoDdl() {
        assertDenied("CREATE TABLE stolen (id int)", "permission denied for schema");
        assertDenied("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "permission denied for schema");
        assertDenied("DROP TABLE outbox", "must be owner");
        assertDenied("ALTER TABLE payments DROP CONSTRAINT refunds_within_amount", "must be owner");
        assertDenied("TRUNCATE payments CASCADE", "permission");
        assertDenied("CREATE ROLE someone", "permission denied");
    }

    @Test
    void outboxRowsChangeOnlyTheirSentMark() throws SQLException {
        exec(
                """
                INSERT INTO outbox (event_id, event_type, topic, key, payload)
                VALUES (gen_random_uuid(), 'PaymentCaptured', 'payment-events', 'k1', '{}')""");
        exec("UPDATE outbox SET sent_at = now() WHERE key = 'k1'");
        assertDenied("UPDATE outbox SET payload = '{\"x\":1}' WHERE key = 'k1'", "permission");
        assertDenied("UPDATE merchant_api_keys SET key_hash = key_hash", "permission");
        exec("DELETE FROM outbox WHERE key = 'k1' AND sent_at IS NOT NULL");
    }

    /**
     * The events feed (V89): a payment-events row written by a service reaches {@code merchant_events} in the same
     * statement, once per event id, with its payment's next version (V93); other topics and events without a merchant
     * do not; an event is never updated.
     */
    @Test
    void paymentEventsReachTheMerchantsFeedAndNothingElseDoes() throws SQLException {
        String merchant = queryString("INSERT INTO merchants (name) VALUES ('feed') RETURNING id");
        String event = queryString("SELECT gen_random_uuid()::text");
        String payment = queryString("SELECT gen_random_uuid()::text");
        String payload = "'{\"eventId\":\"" + event + "\",\"merchantId\":\"" + merchant + "\",\"paymentId\":\""
                + payment + "\"}'";
        exec("INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES ('" + event
                + "', 'RefundSucceeded', 'payment-events', 'p1', " + payload + ")");
        // the next event of the payment takes the next version (V93: the counter the app role bumps, never deletes)
        String next = queryString("SELECT gen_random_uuid()::text");
        exec("INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES ('" + next
                + "', 'RefundFailed', 'payment-events', 'p1', '{\"eventId\":\"" + next + "\",\"merchantId\":\""
                + merchant + "\",\"paymentId\":\"" + payment + "\"}')");
        assertThat(queryString("SELECT string_agg(version::text, ',' ORDER BY version) FROM merchant_events"
                        + " WHERE payment_id = '" + payment + "'"))
                .isEqualTo("1,2");
        assertDenied("DELETE FROM payment_event_versions WHERE payment_id = '" + payment + "'", "permission");
        exec("INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES (gen_random_uuid(),"
                + " 'RefundRequested', 'refund-commands', 'p1', " + payload + ")");
        exec("INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES (gen_random_uuid(),"
                + " 'PaymentCaptured', 'payment-events', 'p2', '{}')");
        assertThat(queryString("SELECT string_agg(id || ' ' || type || ' ' || (payload ->> 'eventId'), ',' ORDER BY"
                        + " version) FROM merchant_events WHERE merchant_id = '" + merchant + "'"))
                .isEqualTo(event + " RefundSucceeded " + event + "," + next + " RefundFailed " + next);
        assertThat(queryString("SELECT count(*) FROM merchant_events WHERE payload = '{}'"))
                .isEqualTo("0");
        assertDenied("UPDATE merchant_events SET type = 'PaymentFailed' WHERE id = '" + event + "'", "permission");
    }

    /**
     * Webhook signing secrets (V94): as payments_app, the previous release's plaintext row is still written, a sealed
     * row (key id and ciphertext, no plaintext) too, and the re-encryption job's update of a plaintext row to a sealed
     * one; a row with neither, or a key id without its ciphertext, is refused.
     */
    @Test
    void webhookSecretsAreWrittenSealedAndThePreviousReleasesPlaintextStillWorks() throws SQLException {
        String merchant = queryString("INSERT INTO merchants (name) VALUES ('secrets') RETURNING id");
        String endpoint = queryString("INSERT INTO webhook_endpoints (id, merchant_id, url, event_types) VALUES"
                + " (gen_random_uuid(), '" + merchant + "', 'https://example.com/h', '{*}') RETURNING id");
        String legacy = "whsec_" + "A".repeat(43) + "=";
        exec("INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, expires_at) VALUES ('" + endpoint + "', '"
                + legacy + "', now() + interval '1 hour')");
        exec("INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext) VALUES (gen_random_uuid(), '"
                + endpoint + "', 'k1', decode(repeat('ab', 60), 'hex'))");
        exec("UPDATE webhook_endpoint_secrets SET key_id = 'k2', ciphertext = decode(repeat('cd', 60), 'hex'),"
                + " secret = NULL WHERE secret = '" + legacy + "'");
        assertThat(queryString("SELECT count(*) FROM webhook_endpoint_secrets WHERE endpoint_id = '" + endpoint
                        + "' AND secret IS NULL AND ciphertext IS NOT NULL"))
                .isEqualTo("2");
        assertThatThrownBy(() -> exec("INSERT INTO webhook_endpoint_secrets (endpoint_id) VALUES ('" + endpoint + "')"))
                .hasMessageContaining("webhook_endpoint_secrets_stored");
        assertThatThrownBy(() -> exec("INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, key_id) VALUES ('"
                        + endpoint + "', '" + legacy + "', 'k1')"))
                .hasMessageContaining("webhook_endpoint_secrets_sealed_with_key");
        exec("DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = '" + endpoint + "'");
    }

    /** A balanced CAPTURE of 100 booked as the app role: inserting is allowed, and the balance trigger still runs. */
    private String bookedTransaction() throws SQLException {
        String merchant = queryString("INSERT INTO merchants (name) VALUES ('m') RETURNING id");
        String tx = queryString("INSERT INTO ledger_transactions (kind, reference, merchant_id) VALUES ('CAPTURE', "
                + "gen_random_uuid()::text, '" + merchant + "') RETURNING id");
        exec("INSERT INTO ledger_entries (transaction_id, account, amount, currency) VALUES ('" + tx
                + "', 'psp_receivable', 100, 'EUR'), ('" + tx + "', 'merchant_payable', -100, 'EUR')");
        assertThatThrownBy(() -> exec("INSERT INTO ledger_entries (transaction_id, account, amount, currency) VALUES ('"
                        + tx + "', 'psp_receivable', 5, 'EUR')"))
                .hasMessageContaining("does not sum to zero");
        return tx;
    }

    private void assertDenied(String sql, String reason) {
        assertThatThrownBy(() -> exec(sql))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining(reason)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42501"));
    }

    private void exec(String sql) throws SQLException {
        try (Statement st = app.createStatement()) {
            st.execute(sql);
        }
    }

    private String queryString(String sql) throws SQLException {
        try (Statement st = app.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static boolean bool(Connection db, String sql) throws SQLException {
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
