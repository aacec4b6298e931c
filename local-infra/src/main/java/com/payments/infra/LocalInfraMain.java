package com.payments.infra;

/**
 * Starts PostgreSQL and Kafka as {@link Postgres} and {@link Kafka} resolve them, prints one line
 * per server that a shell can {@code eval} (each starts with {@code export }), then blocks until
 * killed. Logs do not go to stdout. With {@code --database NAME} it also creates that database if it is missing (empty:
 * the schema owner migrates it, as in production).
 */
public final class LocalInfraMain {

    private LocalInfraMain() {}

    public static void main(String[] args) throws InterruptedException {
        // The JBoss LogManager (from quarkus-junit) complains on stderr unless it is installed first.
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        Postgres.Server pg = Postgres.server();
        String kafka = Kafka.bootstrapServers();
        System.out.println("export PAYMENTS_PG_HOST=" + quote(pg.host())
                + " PAYMENTS_PG_PORT=" + pg.port()
                + " PAYMENTS_PG_USER=" + quote(pg.user())
                + " PAYMENTS_PG_PASSWORD=" + quote(pg.password()));
        System.out.println("export PAYMENTS_KAFKA_BOOTSTRAP_SERVERS=" + quote(kafka));
        if (args.length == 2 && args[0].equals("--database")) {
            Postgres.createDatabaseIfMissing(args[1]);
            System.out.println("export PAYMENTS_PG_DATABASE=" + quote(args[1]));
        }
        System.out.flush();
        Thread.currentThread().join();
    }

    private static String quote(String value) {
        return "'" + value.replace("'", "'\\''") + "'";
    }
}
