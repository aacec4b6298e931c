package com.payments.infra;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/**
 * Starts PostgreSQL and Kafka as {@link Postgres} and {@link Kafka} resolve them, prints one line
 * per server that a shell can {@code eval} (each starts with {@code export }) and a last line {@code # ready}, then
 * blocks until killed. Logs do not go to stdout. With {@code --database NAME} it also creates that database if it is
 * missing (empty: the schema owner migrates it, as in production). {@code PAYMENTS_PG_USER} is the schema owner (it
 * runs the migrations); {@code PAYMENTS_PG_APP_USER} is the services' login, which this creates as an operator would.
 *
 * <p>When the broker is in-process (no {@code PAYMENTS_KAFKA_BOOTSTRAP_SERVERS}, no testcontainers) it is a
 * {@link RestartableKafka}, and a control endpoint on loopback ({@code PAYMENTS_INFRA_CONTROL}) lets a fault test stop
 * and start it: {@code POST <control>/kafka/stop} (controlled shutdown, data kept), {@code POST
 * <control>/kafka/start} (same ports and log dir; answers once the broker answers).
 */
public final class LocalInfraMain {

    private LocalInfraMain() {}

    public static void main(String[] args) throws InterruptedException, IOException {
        // The JBoss LogManager (from quarkus-junit) complains on stderr unless it is installed first.
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        Postgres.Server pg = Postgres.server();
        boolean inProcessKafka =
                Postgres.env("PAYMENTS_KAFKA_BOOTSTRAP_SERVERS", "").isEmpty()
                        && !"testcontainers".equals(System.getenv("PAYMENTS_INFRA"));
        RestartableKafka restartable = inProcessKafka ? RestartableKafka.start() : null;
        String kafka = inProcessKafka ? restartable.bootstrapServers() : Kafka.bootstrapServers();
        System.out.println("export PAYMENTS_PG_HOST=" + quote(pg.host())
                + " PAYMENTS_PG_PORT=" + pg.port()
                + " PAYMENTS_PG_USER=" + quote(pg.user())
                + " PAYMENTS_PG_PASSWORD=" + quote(pg.password()));
        Postgres.ensureAppLogin();
        System.out.println("export PAYMENTS_PG_APP_USER=" + quote(Postgres.APP_ROLE) + " PAYMENTS_PG_APP_PASSWORD="
                + quote(Postgres.APP_PASSWORD));
        System.out.println("export PAYMENTS_KAFKA_BOOTSTRAP_SERVERS=" + quote(kafka));
        if (restartable != null) {
            Runtime.getRuntime().addShutdownHook(new Thread(restartable::close, "restartable-kafka-stop"));
            System.out.println("export PAYMENTS_INFRA_CONTROL=" + quote(control(restartable)));
        }
        if (args.length == 2 && args[0].equals("--database")) {
            Postgres.createDatabaseIfMissing(args[1]);
            System.out.println("export PAYMENTS_PG_DATABASE=" + quote(args[1]));
        }
        System.out.println("# ready");
        System.out.flush();
        Thread.currentThread().join();
    }

    /** Starts the control endpoint on a free loopback port; one thread, so stop and start never overlap. */
    private static String control(RestartableKafka kafka) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext(
                "/kafka/stop",
                exchange -> answer(exchange, () -> {
                    kafka.stopBroker();
                    return "kafka stopped";
                }));
        server.createContext(
                "/kafka/start",
                exchange -> answer(exchange, () -> {
                    kafka.startBroker();
                    return "kafka started";
                }));
        server.setExecutor(Executors.newSingleThreadExecutor());
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private interface Action {
        String run();
    }

    private static void answer(HttpExchange exchange, Action action) throws IOException {
        int status = 405;
        String body = "use POST";
        if ("POST".equals(exchange.getRequestMethod())) {
            try {
                body = action.run();
                status = 200;
            } catch (RuntimeException e) {
                body = "failed: " + e;
                status = 500;
            }
            System.err.println("LocalInfraMain control " + exchange.getRequestURI() + ": " + body);
        }
        byte[] bytes = (body + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static String quote(String value) {
        return "'" + value.replace("'", "'\\''") + "'";
    }
}
