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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Authorize now, capture later (V98) held by the schema, as the services' role {@code payments_app}: the state machine
 * of both capture methods, a capture within the authorization, exactly one of racing captures and cancels, refunds
 * within the captured amount, and the ledger of a manual payment.
 */
class ManualCaptureSchemaTest {
    private static final long AUTHORIZED = 1000;
    private static final int RACERS = 16;

    /** The whole transition table: every pair not here is refused. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            "PROCESSING", Set.of("CAPTURED", "FAILED", "UNKNOWN"),
            "UNKNOWN", Set.of("CAPTURED", "FAILED"),
            "AUTHORIZING", Set.of("AUTHORIZED", "FAILED"),
            "AUTHORIZED", Set.of("CAPTURING", "CANCELING", "EXPIRING"),
            "CAPTURING", Set.of("CAPTURED", "AUTHORIZED", "EXPIRED"),
            "CANCELING", Set.of("CANCELED", "AUTHORIZED"),
            "EXPIRING", Set.of("EXPIRED", "AUTHORIZED"));

    private static final List<String> STATES = List.of(
            "PROCESSING",
            "UNKNOWN",
            "CAPTURED",
            "FAILED",
            "AUTHORIZING",
            "AUTHORIZED",
            "CAPTURING",
            "CANCELING",
            "CANCELED",
            "EXPIRING",
            "EXPIRED");

    /** How a test reaches each state of each capture method, by allowed transitions only. */
    private static final Map<String, List<String>> AUTOMATIC_PATHS = Map.of(
            "PROCESSING", List.of(),
            "UNKNOWN", List.of("UNKNOWN"),
            "CAPTURED", List.of("CAPTURED"),
            "FAILED", List.of("FAILED"));

    private static final Map<String, List<String>> MANUAL_PATHS = Map.of(
            "AUTHORIZING", List.of(),
            "AUTHORIZED", List.of("AUTHORIZED"),
            "CAPTURING", List.of("AUTHORIZED", "CAPTURING"),
            "CAPTURED", List.of("AUTHORIZED", "CAPTURING", "CAPTURED"),
            "CANCELING", List.of("AUTHORIZED", "CANCELING"),
            "CANCELED", List.of("AUTHORIZED", "CANCELING", "CANCELED"),
            "EXPIRING", List.of("AUTHORIZED", "EXPIRING"),
            "EXPIRED", List.of("AUTHORIZED", "EXPIRING", "EXPIRED"),
            "FAILED", List.of("FAILED"));

    private static Postgres.Database app;
    private Connection db;
    private UUID merchant;

    @BeforeAll
    static void migrate() {
        app = Postgres.freshDatabase("manualcapture").asApp();
    }

    @BeforeEach
    void connect() throws SQLException {
        db = connection();
        merchant = UUID.fromString(query(db, "INSERT INTO merchants (name) VALUES ('m') RETURNING id"));
    }

    @AfterEach
    void close() throws SQLException {
        db.close();
    }

    /**
     * Every (from, to) pair of states, from a payment of each capture method that is in {@code from}: allowed exactly
     * when the table says so, else refused by the transition guard with nothing changed.
     */
    @Test
    void theTransitionTableIsExactlyTheSchemas() throws SQLException {
        List<String> wrong = new ArrayList<>();
        for (var method : List.of(Map.entry("AUTOMATIC", AUTOMATIC_PATHS), Map.entry("MANUAL", MANUAL_PATHS))) {
            for (var source : method.getValue().entrySet()) {
                for (String target : STATES) {
                    if (target.equals(source.getKey())) {
                        continue;
                    }
                    UUID payment = payment(method.getKey(), source.getValue());
                    boolean allowed =
                            ALLOWED.getOrDefault(source.getKey(), Set.of()).contains(target);
                    String outcome;
                    try {
                        move(payment, target);
                        outcome = "allowed";
                    } catch (SQLException e) {
                        outcome = e.getMessage()
                                        .contains("illegal payment transition " + source.getKey() + " -> " + target)
                                ? "refused"
                                : "failed otherwise: " + e.getMessage();
                    }
                    String expected = allowed ? "allowed" : "refused";
                    if (!outcome.equals(expected)) {
                        wrong.add(method.getKey() + " " + source.getKey() + " -> " + target + ": " + outcome
                                + ", expected " + expected);
                    }
                    String status = query(db, "SELECT status FROM payments WHERE id = '" + payment + "'");
                    assertThat(status).isEqualTo(allowed ? target : source.getKey());
                }
            }
        }
        assertThat(wrong).isEmpty();
    }

    /** A manual payment's life: each step audited, authorized_at set by the authorization and kept. */
    @Test
    void aManualPaymentIsAuthorizedThenCapturedInPart() throws SQLException {
        UUID payment = payment("MANUAL", List.of("AUTHORIZED"));
        String authorizedAt = query(db, "SELECT authorized_at FROM payments WHERE id = '" + payment + "'");
        assertThat(authorizedAt).isNotNull();
        exec(db, "UPDATE payments SET status = 'CAPTURING', captured_amount = 400 WHERE id = '" + payment + "'");
        // the capture certainly not made (never sent): the authorization stands, the amount is free again
        exec(db, "UPDATE payments SET status = 'AUTHORIZED', captured_amount = NULL WHERE id = '" + payment + "'");
        exec(db, "UPDATE payments SET status = 'CAPTURING', captured_amount = 600 WHERE id = '" + payment + "'");
        captureBooking(payment, 600);
        assertThat(query(
                        db,
                        "SELECT status || ' ' || captured_amount || ' ' || (authorized_at = '" + authorizedAt
                                + "') FROM payments WHERE id = '" + payment + "'"))
                .isEqualTo("CAPTURED 600 true");
        assertThat(query(
                        db,
                        "SELECT string_agg(from_status || '>' || to_status, ' ' ORDER BY id) FROM payment_transitions"
                                + " WHERE payment_id = '" + payment + "'"))
                .isEqualTo("AUTHORIZING>AUTHORIZED AUTHORIZED>CAPTURING CAPTURING>AUTHORIZED AUTHORIZED>CAPTURING"
                        + " CAPTURING>CAPTURED");
    }

    @Test
    void statesBelongToTheirCaptureMethod() throws SQLException {
        assertRefused(insert("MANUAL", "PROCESSING"), "payments_status_of_capture_method");
        assertRefused(insert("MANUAL", "UNKNOWN"), "payments_status_of_capture_method");
        assertRefused(insert("AUTOMATIC", "AUTHORIZING"), "payments_status_of_capture_method");
        assertRefused(
                "INSERT INTO payments (merchant_id, order_id, amount, currency, source, status, psp_reference,"
                        + " authorized_at) VALUES ('" + merchant
                        + "', 'o', 10, 'EUR', 'tok_visa', 'AUTHORIZED', 'ch_1',"
                        + " now())",
                "payments_status_of_capture_method");
        assertRefused(insert("DEFERRED", "AUTHORIZING"), "payments_capture_method_check");
        // what the previous release inserts (no capture method, PROCESSING) is an automatic payment, as before
        String old = query(
                db,
                "INSERT INTO payments (merchant_id, order_id, amount, currency, source) VALUES ('" + merchant
                        + "', 'o', 10, 'EUR', 'tok_visa') RETURNING capture_method || ' ' || status || ' '"
                        + " || coalesce(captured_amount::text, '-')");
        assertThat(old).isEqualTo("AUTOMATIC PROCESSING -");
        UUID automatic = payment("AUTOMATIC", List.of());
        assertRefused("UPDATE payments SET capture_method = 'MANUAL' WHERE id = '" + automatic + "'", "immutable");
        // an automatic capture captures its whole amount: no captured_amount of its own
        assertRefused(
                "UPDATE payments SET status = 'CAPTURED', psp_reference = 'ch_1', captured_amount = 10 WHERE id = '"
                        + automatic + "'",
                "captured amount is set only when its capture starts");
    }

    @Test
    void aCaptureIsNeverMoreThanTheAuthorization() throws SQLException {
        UUID payment = payment("MANUAL", List.of("AUTHORIZED"));
        assertRefused(capture(payment, AUTHORIZED + 1), "captured_within_authorized");
        assertRefused(capture(payment, 0), "captured_within_authorized");
        assertRefused(
                "UPDATE payments SET status = 'CAPTURING' WHERE id = '" + payment + "'",
                "captured_amount_only_when_captured");
        exec(db, capture(payment, AUTHORIZED));
        // the amount is fixed once the capture started: not raised on the way, not changed by the PSP's answer
        assertRefused(
                "UPDATE payments SET captured_amount = 10 WHERE id = '" + payment + "'",
                "captured amount is set only when its capture starts");
        assertRefused(
                "UPDATE payments SET status = 'CAPTURED', captured_amount = 999 WHERE id = '" + payment + "'",
                "captured amount is set only when its capture starts");
        assertRefused(
                "UPDATE payments SET authorized_at = now() - interval '1 day' WHERE id = '" + payment + "'",
                "authorized_at is set only by its authorization");
        // an authorization the PSP never made has no reference: it cannot be AUTHORIZED
        UUID unreferenced = payment("MANUAL", List.of());
        assertRefused(
                "UPDATE payments SET status = 'AUTHORIZED' WHERE id = '" + unreferenced + "'",
                "authorized_has_reference");
        assertThat(query(db, "SELECT status || ' ' || captured_amount FROM payments WHERE id = '" + payment + "'"))
                .isEqualTo("CAPTURING " + AUTHORIZED);
    }

    /**
     * Many transactions, each on its own connection and started together, capture (each another amount) and cancel
     * one AUTHORIZED payment; half of them with the guarded update, half blindly by id. In every round exactly one
     * moves it out of AUTHORIZED, and no other changes what it did.
     */
    @Test
    void racingCapturesAndCancelsEndWithExactlyOne() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(RACERS);
        List<Connection> connections = new ArrayList<>();
        try {
            for (int i = 0; i < RACERS; i++) {
                connections.add(connection());
            }
            Set<String> outcomes = new HashSet<>();
            for (int round = 0; round < 20; round++) {
                UUID payment = payment("MANUAL", List.of("AUTHORIZED"));
                CountDownLatch start = new CountDownLatch(1);
                List<Future<String>> racers = new ArrayList<>();
                boolean[] guarded = new boolean[RACERS];
                for (int i = 0; i < RACERS; i++) {
                    Connection c = connections.get(i);
                    long amount = 100 + i;
                    // roles rotate each round, so that no kind always starts first
                    int role = (i + round) % 4;
                    guarded[i] = role < 2;
                    String guard = guarded[i] ? " AND status = 'AUTHORIZED'" : "";
                    String move = role % 2 == 0
                            ? "UPDATE payments SET status = 'CAPTURING', captured_amount = " + amount
                            : "UPDATE payments SET status = 'CANCELING'";
                    String sql = move + " WHERE id = '" + payment + "'" + guard;
                    racers.add(pool.submit((Callable<String>) () -> {
                        start.await();
                        return race(c, sql, amount);
                    }));
                }
                start.countDown();
                List<String> captures = new ArrayList<>();
                List<String> cancels = new ArrayList<>();
                int guardedWins = 0;
                for (int i = 0; i < RACERS; i++) {
                    String result = racers.get(i).get();
                    if (result.startsWith("won")) {
                        (result.contains("CAPTURING") ? captures : cancels).add(result);
                        guardedWins += guarded[i] ? 1 : 0;
                    } else {
                        assertThat(result).isIn("no row", "refused");
                    }
                }
                // One transaction took it out of AUTHORIZED. A guarded update learns from its row count whether it
                // was that one; a blind cancel after the winning cancel sets CANCELING again (no transition), any
                // other blind update is refused.
                assertThat(guardedWins).isLessThanOrEqualTo(1);
                assertThat(query(
                                db,
                                "SELECT count(*) FROM payment_transitions WHERE from_status = 'AUTHORIZED'"
                                        + " AND payment_id = '" + payment + "'"))
                        .isEqualTo("1");
                String state = query(
                        db,
                        "SELECT status || ' ' || coalesce(captured_amount::text, '-') FROM payments WHERE id = '"
                                + payment + "'");
                if (captures.isEmpty()) {
                    assertThat(cancels).isNotEmpty();
                    assertThat(state).isEqualTo("CANCELING -");
                } else {
                    assertThat(cancels).isEmpty();
                    assertThat(captures).hasSize(1);
                    assertThat(captures.get(0)).isEqualTo("won " + state);
                }
                outcomes.add(state.substring(0, state.indexOf(' ')));
            }
            // both kinds won some rounds: the race was real
            assertThat(outcomes).containsExactlyInAnyOrder("CAPTURING", "CANCELING");
        } finally {
            pool.shutdownNow();
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    /** One racer's transaction: its update, held a moment so that the others queue on the row, then commit. */
    private static String race(Connection c, String sql, long amount) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            int rows = st.executeUpdate(sql);
            if (rows == 0) {
                c.rollback();
                return "no row";
            }
            st.execute("SELECT pg_sleep(0.02)");
            c.commit();
            return sql.contains("CAPTURING") ? "won CAPTURING " + amount : "won CANCELING -";
        } catch (SQLException e) {
            c.rollback();
            if (e.getMessage().contains("illegal payment transition")
                    || e.getMessage().contains("captured amount is set only when its capture starts")) {
                return "refused";
            }
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /**
     * Refunds reserve against the captured amount: concurrent reservations of 100 on a capture of 600 of 1,000 take
     * 600 and no more; an automatic payment still takes its whole amount; an uncaptured one nothing.
     */
    @Test
    void refundsReserveWithinTheCapturedAmount() throws Exception {
        UUID partial = payment("MANUAL", List.of("AUTHORIZED"));
        exec(db, capture(partial, 600));
        captureBooking(partial, 600);
        assertThat(concurrentReservations(partial, 12)).isEqualTo(6);
        UUID automatic = payment("AUTOMATIC", List.of("CAPTURED"));
        assertThat(concurrentReservations(automatic, 12)).isEqualTo(10);
        assertThat(query(
                        db,
                        "SELECT string_agg(refunded_amount::text, ' ' ORDER BY capture_method DESC) FROM payments"
                                + " WHERE id IN ('" + partial + "', '" + automatic + "')"))
                .isEqualTo("600 1000");

        // a statement that bounds by the whole amount (the previous release's reservation) is stopped by the CHECK
        exec(db, "UPDATE payments SET refunded_amount = 500 WHERE id = '" + partial + "'");
        assertRefused(
                "UPDATE payments p SET refunded_amount = p.refunded_amount + 200 WHERE p.id = '" + partial
                        + "' AND p.status = 'CAPTURED' AND p.refunded_amount + 200 <= p.amount",
                "refunds_within_captured_amount");
        assertRefused(
                "UPDATE payments SET refunded_amount = 1001 WHERE id = '" + automatic + "'", "refunds_within_amount");

        for (List<String> uncaptured : List.of(List.of("AUTHORIZED"), List.of("AUTHORIZED", "CAPTURING"))) {
            UUID payment = payment("MANUAL", uncaptured);
            assertThat(reserve(db, payment, 100)).isFalse();
            assertRefused(
                    "UPDATE payments SET refunded_amount = 100 WHERE id = '" + payment + "'",
                    "refunds only on CAPTURED payments");
        }
    }

    /**
     * The ledger of a manual payment, held at commit: the authorization books nothing; the capture books the captured
     * amount, not the authorized one; a cancel or an expiry books nothing. The books balance.
     */
    @Test
    void aCaptureBooksTheCapturedAmountAndNothingElseBooks() throws SQLException {
        UUID payment = payment("MANUAL", List.of("AUTHORIZED"));
        exec(db, capture(payment, 600));
        assertThatThrownBy(() -> inTransaction(
                        "UPDATE payments SET status = 'CAPTURED' WHERE id = '" + payment + "'",
                        book(payment, AUTHORIZED)))
                .hasMessageContaining("captured 600 but its CAPTURE ledger transaction books 1000");
        assertThatThrownBy(() -> inTransaction("UPDATE payments SET status = 'CAPTURED' WHERE id = '" + payment + "'"))
                .hasMessageContaining("captured 600 but its CAPTURE ledger transaction books nothing");
        assertThat(query(db, "SELECT status FROM payments WHERE id = '" + payment + "'"))
                .isEqualTo("CAPTURING");
        captureBooking(payment, 600);

        UUID canceled = payment("MANUAL", List.of("AUTHORIZED", "CANCELING"));
        assertThatThrownBy(() -> inTransaction(
                        book(canceled, 300), "UPDATE payments SET status = 'CANCELED' WHERE id = '" + canceled + "'"))
                .hasMessageContaining("is CANCELED but a CAPTURE ledger transaction books 300");
        UUID authorizing = payment("MANUAL", List.of());
        assertThatThrownBy(() -> inTransaction(
                        "UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'ch_a' WHERE id = '" + authorizing
                                + "'",
                        book(authorizing, AUTHORIZED)))
                .hasMessageContaining("is AUTHORIZED but a CAPTURE ledger transaction books 1000");
        UUID expired = payment("MANUAL", List.of("AUTHORIZED", "EXPIRING", "EXPIRED"));
        // several steps in one transaction: held against where the payment ends, not each step on the way
        UUID oneGo = payment("MANUAL", List.of());
        inTransaction(
                "UPDATE payments SET status = 'AUTHORIZED', psp_reference = 'pi_1' WHERE id = '" + oneGo + "'",
                capture(oneGo, 250),
                book(oneGo, 250),
                "UPDATE payments SET status = 'CAPTURED' WHERE id = '" + oneGo + "'");
        assertThat(query(db, "SELECT status || ' ' || captured_amount FROM payments WHERE id = '" + oneGo + "'"))
                .isEqualTo("CAPTURED 250");

        // a refund of part of the capture: the books of the payment balance at 600 - 200 owed to the merchant
        exec(db, "UPDATE payments SET refunded_amount = 200 WHERE id = '" + payment + "'");
        String refund = query(
                db,
                "INSERT INTO refunds (payment_id, merchant_id, amount, currency) VALUES ('" + payment + "', '"
                        + merchant + "', 200, 'EUR') RETURNING id");
        assertThat(query(db, "SELECT settle_refund('" + refund + "', 'SUCCEEDED', 're_1', NULL, 'test', '{}')"))
                .isEqualTo("t");
        assertThat(query(
                        db,
                        "SELECT string_agg(account || ' ' || total, ', ' ORDER BY account) FROM (SELECT e.account,"
                                + " sum(e.amount) AS total FROM ledger_transactions t JOIN ledger_entries e"
                                + " ON e.transaction_id = t.id WHERE t.reference IN ('" + payment + "', '" + refund
                                + "', '" + canceled + "', '" + authorizing + "', '" + expired
                                + "') GROUP BY e.account) a"))
                .isEqualTo("merchant_payable -400, psp_receivable 400");
    }

    /** A payment of {@value #AUTHORIZED} EUR of the capture method, moved along {@code path}. */
    private UUID payment(String method, List<String> path) throws SQLException {
        UUID id = UUID.fromString(
                query(db, insert(method, method.equals("MANUAL") ? "AUTHORIZING" : "PROCESSING") + " RETURNING id"));
        for (String status : path) {
            move(id, status);
        }
        return id;
    }

    private String insert(String method, String status) {
        return "INSERT INTO payments (merchant_id, order_id, amount, currency, source, capture_method, status) VALUES"
                + " ('" + merchant + "', 'o', " + AUTHORIZED + ", 'EUR', 'tok_visa', '" + method + "', '" + status
                + "')";
    }

    /**
     * Moves the payment to {@code status} as the services would: with the PSP's reference, the captured amount while
     * a manual capture runs (600, or the one it has), and the capture's ledger transaction when a manual capture ends.
     */
    private void move(UUID id, String status) throws SQLException {
        String update = "UPDATE payments SET status = '" + status + "', psp_reference = coalesce(psp_reference, 'ch_"
                + id + "'), captured_amount = CASE WHEN capture_method = 'MANUAL' AND '" + status
                + "' IN ('CAPTURING', 'CAPTURED') THEN coalesce(captured_amount, 600) END WHERE id = '" + id + "'";
        boolean manualCapture = status.equals("CAPTURED")
                && query(db, "SELECT capture_method FROM payments WHERE id = '" + id + "'")
                        .equals("MANUAL");
        if (manualCapture) {
            inTransaction(update, book(id, 600));
        } else {
            exec(db, update);
        }
    }

    private void captureBooking(UUID id, long amount) throws SQLException {
        inTransaction("UPDATE payments SET status = 'CAPTURED' WHERE id = '" + id + "'", book(id, amount));
    }

    private String book(UUID id, long amount) {
        return "SELECT book_ledger_transaction('CAPTURE', 'psp_receivable', 'merchant_payable', '" + id + "', '"
                + merchant + "', 'payment captured', " + amount + ", 'EUR', false)";
    }

    private static String capture(UUID id, long amount) {
        return "UPDATE payments SET status = 'CAPTURING', captured_amount = " + amount + " WHERE id = '" + id + "'";
    }

    private void inTransaction(String... statements) throws SQLException {
        db.setAutoCommit(false);
        try {
            for (String sql : statements) {
                exec(db, sql);
            }
            db.commit();
        } catch (SQLException e) {
            db.rollback();
            throw e;
        } finally {
            db.setAutoCommit(true);
        }
    }

    /** {@code count} reservations of 100 on the payment, each on its own connection, started together. */
    private int concurrentReservations(UUID payment, int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Boolean>> calls = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                calls.add(pool.submit((Callable<Boolean>) () -> {
                    try (Connection c = connection()) {
                        start.await();
                        return reserve(c, payment, 100);
                    }
                }));
            }
            start.countDown();
            int reserved = 0;
            for (Future<Boolean> call : calls) {
                reserved += call.get() ? 1 : 0;
            }
            return reserved;
        } finally {
            pool.shutdownNow();
        }
    }

    /** The refund reservation's guarded update (payments-api refund-reserve.sql): the captured amount bounds it. */
    private static boolean reserve(Connection c, UUID payment, long amount) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                """
                UPDATE payments p SET refunded_amount = p.refunded_amount + ?
                 WHERE p.id = ? AND p.status = 'CAPTURED'
                   AND p.refunded_amount + ? <= coalesce(p.captured_amount, p.amount)""")) {
            ps.setLong(1, amount);
            ps.setObject(2, payment);
            ps.setLong(3, amount);
            return ps.executeUpdate() == 1;
        }
    }

    private void assertRefused(String sql, String reason) {
        assertThatThrownBy(() -> exec(db, sql)).isInstanceOf(SQLException.class).hasMessageContaining(reason);
    }

    private static Connection connection() throws SQLException {
        return DriverManager.getConnection(app.jdbcUrl(), app.user(), app.password());
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
