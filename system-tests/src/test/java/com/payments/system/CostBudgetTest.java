package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * The cost budget of the three hot operations (docs/capacity.md, "Cost budget per operation"): {@value #N} captures,
 * {@value #N} refund reservations and {@value #N} refund executions against the packaged payments-api (sandbox
 * webhooks on), outbox-relay and refunds-worker, counted with PostgreSQL's own counters: statements and plans
 * (pg_stat_statements), row writes by table (pg_stat_user_tables), commits (pg_stat_database) and WAL bytes
 * (pg_current_wal_lsn). None of them depends on the machine's speed or load, so the test fails when an operation costs
 * more than the budget table in docs/capacity.md allows, and never because the machine is slow.
 *
 * <p>A PostgreSQL server of its own: WAL is counted per cluster, and pg_stat_statements has to be preloaded. Timers that
 * would add work by the clock (resolver, relay's poll and stats, worker's sync and gauges, API key cache expiry) are
 * pushed out of the run, so the counters hold only what the requests cause.
 */
class CostBudgetTest {
    /** Operations per phase: enough that per-batch work of the relay averages out, small enough for CI. */
    static final int N = 200;

    private static final Duration OUTCOME = Duration.ofSeconds(120);
    private static final int SLOW_CAPTURES_AT_ONCE = 10;
    private static final String CAPACITY_DOC = "docs/capacity.md";

    @Test
    void captureRefundReservationAndRefundExecutionStayWithinTheirBudgets() throws Exception {
        Map<String, Map<String, Double>> budgets = budgets();
        List<AutoCloseable> processes = new ArrayList<>();
        try (CountedPostgres pg = CountedPostgres.start()) {
            Postgres.Database app = pg.database().asApp();
            Stack.recreateTopics();
            // the sandbox sends its webhooks to payments-api, which calls the sandbox: payments-api's port first
            int apiPort = QuarkusProcess.freePort();
            PspSandbox psp = PspSandbox.start(Map.of(
                    "psp.webhook.url",
                    "http://127.0.0.1:" + apiPort + "/v1/psp/webhooks",
                    "psp.webhook.reorder-delay",
                    "2s"));
            processes.add(psp);
            QuarkusProcess api = Stack.paymentsApi(
                    app,
                    psp.url(),
                    // its recon gauges still read once a minute (payments.metrics.recon-every is no mapped setting)
                    Map.of("quarkus.http.port", Integer.toString(apiPort), "payments.auth.cache-ttl", "1h"));
            processes.add(api);
            Merchant.use(api);
            Map<String, String> relay = new HashMap<>(Stack.datasource(app));
            relay.put("kafka.bootstrap.servers", Kafka.bootstrapServers());
            relay.put("quarkus.log.level", "WARN");
            relay.put("relay.poll-interval", "1h"); // NOTIFY wakes it; no look at the table by the clock
            relay.put("relay.stats-interval", "1h");
            relay.put("relay.retention-interval", "1h");
            processes.add(QuarkusProcess.start("outbox-relay", "256m", relay));
            Map<String, String> worker = new HashMap<>(Stack.datasource(app));
            worker.put("kafka.bootstrap.servers", Kafka.bootstrapServers());
            worker.put("quarkus.log.level", "WARN");
            worker.put("psp.url", psp.url());
            worker.put("refunds.sync.every", "1h");
            worker.put("refunds.metrics.every", "1h");
            worker.put("refunds.dedup.purge-every", "1h");
            QuarkusProcess refundsWorker = QuarkusProcess.start("refunds-worker", "256m", worker);

            // every path once (JIT and pools are no counter's business, but a cold first PSP call can time out), and
            // one refund through the worker so that its consumer group has an offset to resume from
            Merchant.warmUp(psp.url());
            UUID warm = captured();
            UUID warmRefund = reserveRefund(warm);
            await().atMost(OUTCOME).pollInterval(Duration.ofMillis(200)).until(() -> "SUCCEEDED"
                    .equals(pg.text("SELECT status FROM refunds WHERE id = '" + warmRefund + "'")));
            refundsWorker.close();
            long webhooks = settle(pg, 0);

            Map<String, Map<String, Double>> measured = new LinkedHashMap<>();

            Counters before = pg.counters();
            List<UUID> payments = new ArrayList<>();
            // The PSP's charge.succeeded webhook races the capture's own outcome statement, and the two orders cost
            // different statements, so the run takes each order for half of the captures instead of leaving the mix
            // to the machine's timing (one CI run had 94 % of the webhooks first, a run here 45 %). First half: the
            // webhooks held back 2 s, after their capture's answer. Second half: the charges answered 300 ms late,
            // after their webhook settled the payment.
            Merchant.pspFaults(psp.url(), "{\"webhookReorderRate\":1.0,\"latencyFixedMs\":0}");
            for (int i = 0; i < N / 2; i++) {
                payments.add(captured());
            }
            Merchant.pspFaults(psp.url(), "{\"webhookReorderRate\":0.0,\"latencyFixedMs\":300}");
            payments.addAll(capturedConcurrently(N - N / 2));
            webhooks = settle(pg, webhooks + N); // charge.succeeded of each
            Merchant.psp(psp.url()).delete("/test/faults").then().statusCode(200);
            Counters afterCaptures = pg.counters();
            measured.put("capture", afterCaptures.minus(before).per(N));

            List<UUID> refunds = new ArrayList<>();
            for (UUID payment : payments) {
                refunds.add(reserveRefund(payment));
            }
            settle(pg, webhooks); // the relay publishes the commands; no worker runs
            Counters afterReservations = pg.counters();
            measured.put(
                    "refund reservation", afterReservations.minus(afterCaptures).per(N));

            processes.add(QuarkusProcess.start("refunds-worker", "256m", worker));
            await().atMost(OUTCOME)
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> pg.number("SELECT count(*) FROM refunds WHERE status = 'SUCCEEDED'") == N + 1);
            settle(pg, webhooks + N); // refund.succeeded of each
            Counters afterExecutions = pg.counters();
            measured.put(
                    "refund execution", afterExecutions.minus(afterReservations).per(N));
            assertThat(refunds).hasSize(N);

            String table = table(measured, budgets);
            System.out.println("Cost per operation, N = " + N + " each (docs/capacity.md):\n" + table);
            List<String> over = overBudget(measured, budgets);
            assertThat(over)
                    .as("counters over their budget in " + CAPACITY_DOC + " (raise a budget only with the reason for"
                            + " the new cost in its row):\n" + table)
                    .isEmpty();
        } finally {
            Stack.stopAll(processes);
        }
    }

    private static UUID captured() {
        Response response = capture(KEY_A, unique("budget"), body(unique("order"), 10_000, "EUR", "tok_visa"));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    /**
     * {@code count} captures, {@value #SLOW_CAPTURES_AT_ONCE} at a time: each waits 300 ms for the PSP, which one after
     * the other took half a minute of CI. Which order the webhook and the outcome come in is set by the PSP's faults,
     * not by the timing, so running them together changes what they cost only through the relay's batches (fewer
     * statements per operation, never more).
     */
    private static List<UUID> capturedConcurrently(int count) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(SLOW_CAPTURES_AT_ONCE);
        try {
            List<Future<UUID>> captures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                captures.add(clients.submit(CostBudgetTest::captured));
            }
            List<UUID> ids = new ArrayList<>();
            for (Future<UUID> capture : captures) {
                ids.add(capture.get(OUTCOME.toSeconds(), TimeUnit.SECONDS));
            }
            return ids;
        } finally {
            clients.shutdownNow();
        }
    }

    private static UUID reserveRefund(UUID paymentId) {
        Response response = merchant(KEY_A)
                .header("Idempotency-Key", unique("refund"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":2500}")
                .post("/v1/payments/" + paymentId + "/refunds");
        response.then().statusCode(202);
        return UUID.fromString(response.path("refundId"));
    }

    /**
     * Waits until the work the requests caused is done (every outbox row published, {@code webhooks} PSP webhooks
     * processed, no statement for 3 s) and the counters are all reported: a backend reports its table and commit
     * counts when idle, within 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL). Returns the webhooks processed.
     */
    private static long settle(CountedPostgres pg, long webhooks) throws Exception {
        String processed = "SELECT count(*) FROM psp_webhook_events WHERE processed_at IS NOT NULL";
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(500))
                .until(() -> pg.number("SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 0
                        && pg.number(processed) >= webhooks);
        Counters[] last = {null};
        // no statement for 3 s, then the idle backends' reports
        await().atMost(OUTCOME).pollInterval(Duration.ofSeconds(3)).until(() -> {
            Counters now = pg.counters();
            boolean quiet = last[0] != null && now.statements() == last[0].statements();
            last[0] = now;
            return quiet;
        });
        // the last statement is at least 3 s old; an idle backend reports 10 s after it went idle (plus 1 s of margin)
        Thread.sleep(8_000);
        // what the idle services still do by the clock (payments-api's recon gauges, keepalives): shown, not awaited
        Counters settled = pg.counters();
        Thread.sleep(2_000);
        System.out.println("Counters moving while idle, 2 s: " + pg.counters().minus(settled));
        return pg.number(processed);
    }

    // --- counters ---------------------------------------------------------------------------------------------------

    /** What PostgreSQL counted for the services' database up to a moment; row writes by "table inserts" etc. */
    record Counters(long statements, long nested, long plans, long commits, long walBytes, Map<String, Long> writes) {

        Counters minus(Counters earlier) {
            Map<String, Long> delta = new TreeMap<>();
            writes.forEach((key, value) -> {
                long d = value - earlier.writes.getOrDefault(key, 0L);
                if (d != 0) {
                    delta.put(key, d);
                }
            });
            return new Counters(
                    statements - earlier.statements,
                    nested - earlier.nested,
                    plans - earlier.plans,
                    commits - earlier.commits,
                    walBytes - earlier.walBytes,
                    delta);
        }

        Map<String, Double> per(int operations) {
            Map<String, Double> out = new LinkedHashMap<>();
            out.put("statements", (double) statements / operations);
            out.put("statements in functions", (double) nested / operations);
            out.put("plans", (double) plans / operations);
            out.put("commits", (double) commits / operations);
            out.put("WAL bytes", (double) walBytes / operations);
            writes.forEach((key, value) -> out.put(key, (double) value / operations));
            return out;
        }
    }

    /**
     * An embedded PostgreSQL 15 of this test only, with pg_stat_statements preloaded, and the services' database on
     * it. No autovacuum (its WAL would come by the clock), no full-page images (their WAL depends on when the last
     * checkpoint was), no checkpoint during the run, wal_level minimal (no standby snapshots written by the clock).
     */
    static final class CountedPostgres implements AutoCloseable {
        private final EmbeddedPostgres server;
        private final Postgres.Database database;

        private CountedPostgres(EmbeddedPostgres server, Postgres.Database database) {
            this.server = server;
            this.database = database;
        }

        static CountedPostgres start() throws IOException, SQLException {
            EmbeddedPostgres server = EmbeddedPostgres.builder()
                    .setServerConfig("listen_addresses", "127.0.0.1")
                    .setServerConfig("max_connections", "100")
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                    .setServerConfig("pg_stat_statements.track", "all")
                    .setServerConfig("pg_stat_statements.track_planning", "on")
                    .setServerConfig("pg_stat_statements.max", "10000")
                    .setServerConfig("autovacuum", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("wal_level", "minimal")
                    .setServerConfig("max_wal_senders", "0")
                    .setServerConfig("checkpoint_timeout", "1d")
                    .setServerConfig("max_wal_size", "10GB")
                    .setRegisterShutdownHook(true)
                    .start();
            String name =
                    "budget_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            try (Connection admin = server.getPostgresDatabase().getConnection();
                    Statement sql = admin.createStatement()) {
                sql.execute("CREATE EXTENSION pg_stat_statements");
                sql.execute("CREATE ROLE " + Postgres.APP_ROLE + " LOGIN PASSWORD '" + Postgres.APP_PASSWORD + "'");
                sql.execute("CREATE DATABASE " + name);
            }
            Postgres.Database database = new Postgres.Database(name, "127.0.0.1", server.getPort(), "postgres", "");
            Postgres.withSessionLock(Flyway.configure()
                            .dataSource(database.jdbcUrl(), database.user(), database.password())
                            .locations("classpath:db/migration"))
                    .load()
                    .migrate();
            return new CountedPostgres(server, database);
        }

        Postgres.Database database() {
            return database;
        }

        /**
         * Statements and commits of the application role on the database (read from the {@code postgres} database, so
         * that reading counts nothing), the WAL position, and the row writes by table (read in a transaction rolled
         * back: no commit counted).
         */
        Counters counters() throws SQLException {
            long statements;
            long nested;
            long plans;
            long commits;
            long wal;
            try (Connection admin = server.getPostgresDatabase().getConnection();
                    Statement sql = admin.createStatement()) {
                try (ResultSet row = sql.executeQuery(
                        """
                        SELECT coalesce(sum(calls) FILTER (WHERE toplevel), 0),
                               coalesce(sum(calls) FILTER (WHERE NOT toplevel), 0),
                               coalesce(sum(plans), 0)
                          FROM pg_stat_statements
                         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '%s')
                           AND userid = (SELECT oid FROM pg_roles WHERE rolname = '%s')"""
                                .formatted(database.name(), Postgres.APP_ROLE))) {
                    row.next();
                    statements = row.getLong(1);
                    nested = row.getLong(2);
                    plans = row.getLong(3);
                }
                try (ResultSet row =
                        sql.executeQuery("SELECT xact_commit, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
                                + " FROM pg_stat_database WHERE datname = '" + database.name() + "'")) {
                    row.next();
                    commits = row.getLong(1);
                    wal = row.getLong(2);
                }
            }
            Map<String, Long> writes = new TreeMap<>();
            read("SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables", rows -> {
                while (rows.next()) {
                    String table = rows.getString(1);
                    writes.put(table + " inserts", rows.getLong(2));
                    writes.put(table + " updates", rows.getLong(3));
                    writes.put(table + " deletes", rows.getLong(4));
                }
                return null;
            });
            return new Counters(statements, nested, plans, commits, wal, writes);
        }

        long number(String query) throws SQLException {
            return Long.parseLong(text(query));
        }

        String text(String query) throws SQLException {
            return read(query, rows -> rows.next() ? rows.getString(1) : null);
        }

        interface Rows<T> {
            T apply(ResultSet rows) throws SQLException;
        }

        /** A read on the services' database in a transaction rolled back, so that it adds no commit to the count. */
        private <T> T read(String query, Rows<T> reader) throws SQLException {
            try (Connection connection =
                    DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password())) {
                connection.setAutoCommit(false);
                try (Statement sql = connection.createStatement();
                        ResultSet rows = sql.executeQuery(query)) {
                    return reader.apply(rows);
                } finally {
                    connection.rollback();
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    // --- budgets ----------------------------------------------------------------------------------------------------

    /**
     * The budget table of docs/capacity.md: rows {@code | operation | counter | measured | budget | why |} whose first
     * cell is one of the three operations. A counter without a row has the budget 0.
     */
    static Map<String, Map<String, Double>> budgets() throws IOException {
        Map<String, Map<String, Double>> budgets = new LinkedHashMap<>();
        for (String line : Files.readAllLines(capacityDoc())) {
            String[] cells = line.split("\\|");
            if (cells.length < 6) {
                continue;
            }
            String operation = cells[1].trim();
            if (!List.of("capture", "refund reservation", "refund execution").contains(operation)) {
                continue;
            }
            String counter = cells[2].trim().replace("`", "");
            double budget = Double.parseDouble(cells[4].trim().replace(",", "").replace("*", ""));
            budgets.computeIfAbsent(operation, o -> new LinkedHashMap<>()).put(counter, budget);
        }
        assertThat(budgets)
                .as("budget rows in " + CAPACITY_DOC)
                .containsOnlyKeys("capture", "refund reservation", "refund execution");
        return budgets;
    }

    private static Path capacityDoc() {
        for (File dir = new File("").getAbsoluteFile(); dir != null; dir = dir.getParentFile()) {
            Path candidate = dir.toPath().resolve(CAPACITY_DOC);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("No " + CAPACITY_DOC + " above the working directory");
    }

    private static List<String> overBudget(
            Map<String, Map<String, Double>> measured, Map<String, Map<String, Double>> budgets) {
        List<String> over = new ArrayList<>();
        measured.forEach((operation, counters) -> counters.forEach((counter, value) -> {
            double budget = budgets.get(operation).getOrDefault(counter, 0.0);
            if (value > budget + 1e-9) {
                over.add(String.format(Locale.ROOT, "%s: %s %.2f > budget %.2f", operation, counter, value, budget));
            }
        }));
        return over;
    }

    private static String table(Map<String, Map<String, Double>> measured, Map<String, Map<String, Double>> budgets) {
        StringBuilder out = new StringBuilder(
                String.format(Locale.ROOT, "%-20s %-40s %12s %12s%n", "operation", "counter", "per op", "budget"));
        measured.forEach((operation, counters) -> {
            Map<String, Double> rows = new LinkedHashMap<>(counters);
            budgets.get(operation).keySet().forEach(counter -> rows.putIfAbsent(counter, 0.0));
            rows.forEach((counter, value) -> {
                double budget = budgets.get(operation).getOrDefault(counter, 0.0);
                out.append(String.format(
                        Locale.ROOT,
                        "%-20s %-40s %12.2f %12.2f%s%n",
                        operation,
                        counter,
                        value,
                        budget,
                        value > budget + 1e-9 ? "  OVER" : ""));
            });
        });
        return out.toString();
    }
}
