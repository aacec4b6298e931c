package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.payments.infra.DeadHost;
import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.QuarkusProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Two packaged relays as processes; the publisher's host dies without closing its connections (the process stopped
 * and all its packets dropped: {@link DeadHost}). PostgreSQL must notice the dead session and free the publisher lock,
 * so that the standby publishes within {@link #TAKEOVER_BOUND}. Then the old publisher comes back: it must find its
 * session gone and stand by, not keep publishing next to the new one. Throughout, a writer commits events of 50
 * payments; at the end every event is on Kafka and each payment's events, deduplicated by event id, are in commit
 * (= id) order.
 */
class LeaderTakeoverIT {
    /** docs/outbox-relay.md promises takeover in under 30 s with the default settings; measured about 11 s. */
    private static final Duration TAKEOVER_BOUND = Duration.ofSeconds(25);

    /** pg_locks condition: the publisher lock (RelayWorker.LOCK_SQL), granted, in the current database. */
    private static final String PUBLISHER_LOCK = "locktype = 'advisory' AND classid = hashtext('outbox-relay')::oid"
            + " AND objid = 1 AND objsubid = 2 AND granted"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

    private static final int BATCH = 100;
    private static final int PAYMENTS = 50;
    private static final int BACKLOG = 20_000;

    @Test
    void aDeadPublishersLockIsFreedTheStandbyTakesOverAndTheRevivedOneStandsBy() throws Exception {
        String unsupported = DeadHost.unsupportedReason();
        // CI installs nftables and runs as root (.ci/run): there a missing tool is a failure, not a skip.
        if (System.getenv("CI") != null) {
            assertNull(unsupported, "cannot simulate a dead host in CI");
        }
        assumeTrue(unsupported == null, () -> "cannot simulate a dead host here: " + unsupported);
        Postgres.Database db = Postgres.freshDatabase("relay_takeover");
        String topic = "relay-takeover-" + UUID.randomUUID();
        Map<String, String> settings = new HashMap<>(Map.of(
                "quarkus.datasource.reactive.url", db.reactiveUrl(),
                "quarkus.datasource.username", db.user(),
                "kafka.bootstrap.servers", Kafka.bootstrapServers(),
                "quarkus.log.console.json.enabled", "false",
                "relay.batch-size", Integer.toString(BATCH)));
        if (!db.password().isEmpty()) {
            settings.put("quarkus.datasource.password", db.password());
        }

        Writer writer = new Writer(db, topic);
        try (QuarkusProcess first = QuarkusProcess.start("outbox-relay", "256m", settings)) {
            await().ignoreExceptions()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> metric(first, "outbox_relay_leader") == 1);
            try (QuarkusProcess second = QuarkusProcess.start("outbox-relay", "256m", settings)) {
                assertThat(metric(second, "outbox_relay_leader"))
                        .as("one publisher")
                        .isZero();
                writer.start();
                await().ignoreExceptions()
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> metric(first, "outbox_published_total") >= 500);

                int lockSession = writer.lockHolder();
                long publishedBeforeDeath = metric(first, "outbox_published_total");
                long died = System.nanoTime();
                DeadHost deadHost = DeadHost.kill(first.pid());
                try {
                    awaitSessionEnded(writer, lockSession, TAKEOVER_BOUND.plusSeconds(15));
                    long sessionEnded =
                            Duration.ofNanos(System.nanoTime() - died).toMillis();
                    await().ignoreExceptions()
                            .atMost(TAKEOVER_BOUND.plusSeconds(15))
                            .pollInterval(Duration.ofMillis(100))
                            .until(() -> metric(second, "outbox_published_total") > 0);
                    Duration takeover = Duration.ofNanos(System.nanoTime() - died);
                    System.out.printf(
                            "takeover: PostgreSQL ended the dead publisher's lock session after %d ms,"
                                    + " the standby published after %d ms%n",
                            sessionEnded, takeover.toMillis());
                    assertThat(takeover).isLessThan(TAKEOVER_BOUND);

                    // A backlog, so that a revived publisher that still believed it held the lock would have work.
                    writer.insertBacklog(BACKLOG);
                } finally {
                    deadHost.revive();
                }
                await().ignoreExceptions()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> metric(first, "outbox_relay_leader") == 0);
                writer.stop();
                await().ignoreExceptions().atMost(Duration.ofMinutes(3)).until(() -> writer.unsent() == 0);
                long publishedAfterRevival = metric(first, "outbox_published_total") - publishedBeforeDeath;
                System.out.printf(
                        "revived publisher: %d rows published after its death (batch %d, backlog %d)%n",
                        publishedAfterRevival, BATCH, BACKLOG);
                // At most the batch it held when it died, plus what it published between the reading and the kill.
                assertThat(publishedAfterRevival).isLessThanOrEqualTo(3L * BATCH);
                assertThat(metric(first, "outbox_relay_leader")).isZero();
                assertThat(metric(second, "outbox_relay_leader")).isOne();
            }
        } finally {
            writer.stop();
        }

        Map<String, List<String>> commitOrder = writer.eventIdsByKeyInIdOrder();
        int events = commitOrder.values().stream().mapToInt(List::size).sum();
        Map<String, List<String>> firstSeen = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (ConsumerRecord<String, String> record :
                RelayFixture.readAll(Kafka.bootstrapServers(), topic, events, Duration.ofMinutes(3))) {
            String eventId = RelayFixture.eventId(record);
            if (seen.add(eventId)) { // consumers deduplicate by event id
                firstSeen.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(eventId);
            }
        }
        assertThat(firstSeen.keySet()).isEqualTo(commitOrder.keySet());
        commitOrder.forEach((key, ids) -> assertThat(firstSeen.get(key)).as(key).isEqualTo(ids));
    }

    /**
     * The dead publisher's control session blocked in a query (the fence wait of V60, which it takes when it goes to
     * sleep, held up by a writer that holds the fence shared): PostgreSQL must still end the session and free the
     * publisher lock within the bound. The backend reads nothing from its client while the query runs, so TCP
     * keepalive alone only ends it when the query is over; {@code relay.keepalive.connection-check-interval} makes it
     * look at the socket meanwhile.
     */
    @Test
    void aDeadPublisherWhoseLockSessionIsBlockedInAQueryStillLosesTheLock() throws Exception {
        String unsupported = DeadHost.unsupportedReason();
        if (System.getenv("CI") != null) {
            assertNull(unsupported, "cannot simulate a dead host in CI");
        }
        assumeTrue(unsupported == null, () -> "cannot simulate a dead host here: " + unsupported);
        Postgres.Database db = Postgres.freshDatabase("relay_takeover_blocked");
        Map<String, String> settings = new HashMap<>(Map.of(
                "quarkus.datasource.reactive.url", db.reactiveUrl(),
                "quarkus.datasource.username", db.user(),
                "kafka.bootstrap.servers", Kafka.bootstrapServers(),
                "quarkus.log.console.json.enabled", "false"));
        if (!db.password().isEmpty()) {
            settings.put("quarkus.datasource.password", db.password());
        }
        Writer writer = new Writer(db, "unused"); // for its queries; it writes nothing here
        try (QuarkusProcess relay = QuarkusProcess.start("outbox-relay", "256m", settings);
                Connection fence = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
            await().ignoreExceptions()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> metric(relay, "outbox_relay_leader") == 1);
            int lockSession = writer.lockHolder();
            // Held shared as a writer holds it from its insert to its commit: the idle publisher, going to sleep
            // (every poll interval), now waits in the fence until this transaction ends.
            fence.setAutoCommit(false);
            try (Statement st = fence.createStatement()) {
                st.execute("SELECT pg_advisory_xact_lock_shared(hashtext('outbox-relay'), 2)");
            }
            try {
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> writer.waitsInFence(lockSession));
            } catch (ConditionTimeoutException e) {
                throw new AssertionError(
                        "the publisher (backend " + lockSession + ") did not wait in the fence\n" + writer.sessions(),
                        e);
            }
            long died = System.nanoTime();
            try (DeadHost deadHost = DeadHost.kill(relay.pid())) {
                awaitSessionEnded(writer, lockSession, TAKEOVER_BOUND);
                System.out.printf(
                        "blocked in the fence: PostgreSQL ended the dead publisher's lock session after %d ms%n",
                        Duration.ofNanos(System.nanoTime() - died).toMillis());
            } finally {
                fence.rollback();
            }
        }
    }

    /**
     * Waits until the session of backend {@code pid} is gone; if it is not within {@code bound}, fails with what every
     * session of the database was doing and who held the publisher lock, so that a failure in CI says why.
     */
    private static void awaitSessionEnded(Writer writer, int pid, Duration bound) throws SQLException {
        try {
            await().ignoreExceptions()
                    .atMost(bound)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> !writer.sessionAlive(pid));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                    "PostgreSQL did not end the dead publisher's lock session (backend " + pid + ") within " + bound
                            + "\n" + writer.sessions(),
                    e);
        }
    }

    /** A value of the relay's Prometheus endpoint (0 when absent). */
    private static long metric(QuarkusProcess relay, String name) throws Exception {
        // A new client each time: a pooled connection to a dead host would hang. (Slow answers on a loaded machine
        // only make the measured takeover longer.)
        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(relay.managementUrl() + "/q/metrics"))
                .timeout(Duration.ofSeconds(10))
                .build();
        String body = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
        for (String line : body.split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                String sample = line.contains(" # ") ? line.substring(0, line.indexOf(" # ")) : line; // exemplar
                return (long) Double.parseDouble(sample.substring(sample.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    /** Commits one event at a time, round robin over the payments, until stopped; and bulk backlogs. */
    private static final class Writer {
        private final Postgres.Database db;
        private final String topic;
        private final AtomicBoolean running = new AtomicBoolean();
        private Thread thread;

        Writer(Postgres.Database db, String topic) {
            this.db = db;
            this.topic = topic;
        }

        void start() {
            running.set(true);
            thread = new Thread(this::write, "takeover-writer");
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (thread != null) {
                thread.join();
            }
        }

        private void write() {
            try (Connection sql = connect();
                    PreparedStatement insert =
                            sql.prepareStatement("INSERT INTO outbox (event_id, event_type, topic, key, payload)"
                                    + " VALUES (gen_random_uuid(), 'PaymentCaptured', ?, ?, '{}')")) {
                for (int i = 0; running.get(); i++) {
                    insert.setString(1, topic);
                    insert.setString(2, "pay-" + (i % PAYMENTS));
                    insert.executeUpdate();
                    Thread.sleep(2);
                }
            } catch (SQLException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        void insertBacklog(int rows) throws SQLException {
            try (Connection sql = connect();
                    PreparedStatement insert =
                            sql.prepareStatement("INSERT INTO outbox (event_id, event_type, topic, key, payload)"
                                    + " SELECT gen_random_uuid(), 'PaymentCaptured', ?, 'pay-' || (g % ?), '{}'"
                                    + " FROM generate_series(1, ?) g")) {
                insert.setString(1, topic);
                insert.setInt(2, PAYMENTS);
                insert.setInt(3, rows);
                insert.executeUpdate();
            }
        }

        long unsent() throws SQLException {
            try (Connection sql = connect();
                    Statement st = sql.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM outbox WHERE sent_at IS NULL")) {
                rs.next();
                return rs.getLong(1);
            }
        }

        /**
         * The backend process of the session that holds the publisher lock in this test's database. pg_locks lists
         * the locks of every database of the server, and other relays hold the same key in theirs (OutboxRelayIT's
         * application stays up until the failsafe JVM ends): unfiltered, this once named such a session, which never
         * ended, and the test failed in CI waiting for it.
         */
        int lockHolder() throws SQLException {
            try (Connection sql = connect();
                    Statement st = sql.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pid FROM pg_locks WHERE " + PUBLISHER_LOCK)) {
                assertThat(rs.next()).as("a session holds the publisher lock").isTrue();
                int pid = rs.getInt(1);
                assertThat(rs.next()).as("one session holds the publisher lock").isFalse();
                return pid;
            }
        }

        boolean sessionAlive(int pid) throws SQLException {
            try (Connection sql = connect();
                    PreparedStatement st = sql.prepareStatement("SELECT 1 FROM pg_stat_activity WHERE pid = ?")) {
                st.setInt(1, pid);
                try (ResultSet rs = st.executeQuery()) {
                    return rs.next();
                }
            }
        }

        /** pg_stat_activity of the database and the holder of the publisher lock, as text for a failure message. */
        String sessions() throws SQLException {
            StringBuilder text =
                    new StringBuilder("sessions (pid | state | wait event | blocked by | backend_start | query):\n");
            try (Connection sql = connect();
                    Statement st = sql.createStatement()) {
                try (ResultSet rs = st.executeQuery(
                        "SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid), backend_start,"
                                + " left(query, 200) FROM pg_stat_activity WHERE datname = current_database()"
                                + " AND pid <> pg_backend_pid() ORDER BY backend_start")) {
                    while (rs.next()) {
                        text.append(String.format(
                                "  %d | %s | %s/%s | %s | %s | %s%n",
                                rs.getInt(1),
                                rs.getString(2),
                                rs.getString(3),
                                rs.getString(4),
                                rs.getString(5),
                                rs.getString(6),
                                rs.getString(7)));
                    }
                }
                try (ResultSet rs =
                        st.executeQuery("SELECT string_agg(pid::text, ', ') FROM pg_locks WHERE " + PUBLISHER_LOCK)) {
                    rs.next();
                    text.append("publisher lock held by: ").append(rs.getString(1));
                }
            }
            return text.toString();
        }

        /** Whether backend {@code pid} waits in the fence of V60 (RelayWorker.SLEEP_SQL). */
        boolean waitsInFence(int pid) throws SQLException {
            try (Connection sql = connect();
                    PreparedStatement st = sql.prepareStatement("SELECT 1 FROM pg_stat_activity WHERE pid = ?"
                            + " AND state = 'active' AND wait_event_type = 'Lock'"
                            + " AND query LIKE '%pg_advisory_lock(hashtext(''outbox-relay''), 2)%'")) {
                st.setInt(1, pid);
                try (ResultSet rs = st.executeQuery()) {
                    return rs.next();
                }
            }
        }

        /** Per key, its event ids in id order, which is commit order per key (V10). */
        Map<String, List<String>> eventIdsByKeyInIdOrder() throws SQLException {
            Map<String, List<String>> byKey = new HashMap<>();
            try (Connection sql = connect();
                    Statement st = sql.createStatement();
                    ResultSet rs = st.executeQuery("SELECT key, event_id FROM outbox ORDER BY id")) {
                while (rs.next()) {
                    byKey.computeIfAbsent(rs.getString(1), k -> new ArrayList<>())
                            .add(rs.getString(2));
                }
            }
            return byKey;
        }

        private Connection connect() throws SQLException {
            return DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
        }
    }
}
