package com.payments.infra;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * One real PostgreSQL 15 server per JVM, and fresh databases on it.
 *
 * <p>Where the server comes from, checked in this order:
 *
 * <ol>
 *   <li>{@code PAYMENTS_PG_HOST} set: an external server ({@code PAYMENTS_PG_PORT} default 5432,
 *       {@code PAYMENTS_PG_USER} default {@code postgres}, {@code PAYMENTS_PG_PASSWORD} default
 *       empty; the role must be allowed to {@code CREATE DATABASE}, and to create roles unless the login
 *       {@value #APP_ROLE} exists);
 *   <li>{@code PAYMENTS_INFRA=testcontainers}: a {@code postgres:15-alpine} container;
 *   <li>otherwise: an embedded PostgreSQL 15 (zonky), started on first use and stopped at JVM exit.
 * </ol>
 */
public final class Postgres {

    /** Connection settings of the server (connect to its {@code postgres} database to administer it). */
    public record Server(String host, int port, String user, String password) {}

    /** A database of its own on the {@link Server}, already migrated. */
    public record Database(String name, String host, int port, String user, String password) {

        public String jdbcUrl() {
            return "jdbc:postgresql://" + host + ":" + port + "/" + name;
        }

        /** The form {@code quarkus.datasource.reactive.url} takes. */
        public String reactiveUrl() {
            return "postgresql://" + host + ":" + port + "/" + name;
        }

        /** The same database, logged in as the services' role {@value #APP_ROLE} instead of the schema owner. */
        public Database asApp() {
            return new Database(name, host, port, APP_ROLE, APP_PASSWORD);
        }
    }

    /** The services' login, created by migration V79 or, as here, by the operator beforehand (docs/deployment.md). */
    public static final String APP_ROLE = "payments_app";

    /** Local and test runs only; production sets its own (a Secret). */
    public static final String APP_PASSWORD = "payments_app_local";

    private static final String MIGRATIONS = "classpath:db/migration";

    private Postgres() {}

    /** The server, started on the first call. */
    public static Server server() {
        return Holder.SERVER;
    }

    /**
     * Creates a database named {@code <prefix>_<random>} and runs the Flyway migrations found at
     * {@code classpath:db/migration} on it (none found is fine).
     */
    public static Database freshDatabase(String prefix) {
        Database database = emptyDatabase(prefix);
        withSessionLock(Flyway.configure(Thread.currentThread().getContextClassLoader())
                        .dataSource(database.jdbcUrl(), database.user(), database.password())
                        .locations(MIGRATIONS))
                .load()
                .migrate();
        return database;
    }

    /**
     * Flyway's lock held for the session instead of in a transaction, as the migration Job holds it (payments-api's
     * FlywaySessionLock): CREATE INDEX CONCURRENTLY (V101) waits for every older transaction, Flyway's own lock
     * transaction included, so with Flyway's default it would wait forever. Every runner of the migrations uses this.
     */
    public static FluentConfiguration withSessionLock(FluentConfiguration configuration) {
        configuration
                .getPluginRegister()
                .getPlugin(PostgreSQLConfigurationExtension.class)
                .setTransactionalLock(false);
        return configuration;
    }

    /** Creates a database named {@code <prefix>_<random>} without any schema (what the migration Job starts from). */
    public static Database emptyDatabase(String prefix) {
        Server server = server();
        String name = databaseName(prefix);
        String adminUrl = "jdbc:postgresql://" + server.host() + ":" + server.port() + "/postgres";
        try (Connection connection = connect(adminUrl, server);
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE \"" + name + "\"");
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot create database " + name + " on " + adminUrl, e);
        }
        ensureAppLogin();
        return new Database(name, server.host(), server.port(), server.user(), server.password());
    }

    /** Creates an empty database with this name unless it exists. */
    public static void createDatabaseIfMissing(String name) {
        Server server = server();
        String adminUrl = "jdbc:postgresql://" + server.host() + ":" + server.port() + "/postgres";
        try (Connection connection = connect(adminUrl, server);
                Statement statement = connection.createStatement()) {
            var exists = statement.executeQuery(
                    "SELECT 1 FROM pg_database WHERE datname = '" + name.replace("'", "''") + "'");
            if (!exists.next()) {
                statement.execute("CREATE DATABASE \"" + name.replace("\"", "\"\"") + "\"");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot create database " + name + " on " + adminUrl, e);
        }
    }

    /**
     * Makes {@value #APP_ROLE} a login with the local password, as the operator does before the first migration
     * (docs/deployment.md): creates it, or lets a role that migration V79 created without a login log in. Once per
     * JVM; several JVMs may race on one server.
     */
    public static synchronized void ensureAppLogin() {
        if (appLoginReady) {
            return;
        }
        Server server = server();
        String adminUrl = "jdbc:postgresql://" + server.host() + ":" + server.port() + "/postgres";
        String create = "CREATE ROLE " + APP_ROLE + " LOGIN PASSWORD '" + APP_PASSWORD + "'";
        String login = "ALTER ROLE " + APP_ROLE + " LOGIN PASSWORD '" + APP_PASSWORD + "'";
        String ddl =
                """
                DO $$
                BEGIN
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%1$s') THEN
                        BEGIN
                            %2$s;
                        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                        END;
                    END IF;
                    IF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = '%1$s') THEN
                        %3$s;
                    END IF;
                END
                $$"""
                        .formatted(APP_ROLE, create, login);
        for (int attempt = 1; ; attempt++) {
            try (Connection connection = connect(adminUrl, server);
                    Statement statement = connection.createStatement()) {
                statement.execute(ddl);
                appLoginReady = true;
                return;
            } catch (SQLException e) {
                // "tuple concurrently updated" when another JVM alters the role at the same moment: try again.
                if (attempt == 3) {
                    throw new IllegalStateException(
                            "Cannot create the login " + APP_ROLE + " on " + adminUrl + " (as " + server.user()
                                    + ", which needs CREATEROLE)",
                            e);
                }
            }
        }
    }

    private static boolean appLoginReady;

    /**
     * Through the driver itself, not {@code DriverManager}: a second Quarkus start in the same JVM (a test profile)
     * loads this class in a new class loader, to which the driver that the first start registered is not visible.
     */
    private static Connection connect(String url, Server server) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", server.user());
        properties.setProperty("password", server.password());
        return new org.postgresql.Driver().connect(url, properties);
    }

    static String databaseName(String prefix) {
        String clean = prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        if (clean.isEmpty() || !Character.isLetter(clean.charAt(0))) {
            clean = "db_" + clean;
        }
        if (clean.length() > 40) {
            clean = clean.substring(0, 40);
        }
        return clean + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    private static final class Holder {
        static final Server SERVER = start();
    }

    private static Server start() {
        String host = System.getenv("PAYMENTS_PG_HOST");
        if (host != null && !host.isBlank()) {
            return new Server(
                    host,
                    Integer.parseInt(env("PAYMENTS_PG_PORT", "5432")),
                    env("PAYMENTS_PG_USER", "postgres"),
                    env("PAYMENTS_PG_PASSWORD", ""));
        }
        if ("testcontainers".equals(System.getenv("PAYMENTS_INFRA"))) {
            return startContainer();
        }
        return startEmbedded();
    }

    /**
     * Quarkus main-mode tests load this class once per launch in a new class loader; the embedded server is kept per
     * JVM through a system property so that every launch reuses it instead of starting another. The name stays
     * outside the services' config roots ({@code payments.*} is payments-api's @ConfigMapping root, where an unknown
     * property fails the start).
     */
    private static final String EMBEDDED_PORT_PROPERTY = "localinfra.embedded-postgres.port";

    private static synchronized Server startEmbedded() {
        String running = System.getProperty(EMBEDDED_PORT_PROPERTY);
        if (running != null) {
            return new Server("127.0.0.1", Integer.parseInt(running), "postgres", "");
        }
        try {
            EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                    .setServerConfig("listen_addresses", "127.0.0.1")
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("max_connections", "300")
                    .setRegisterShutdownHook(true)
                    .start();
            System.setProperty(EMBEDDED_PORT_PROPERTY, Integer.toString(postgres.getPort()));
            return new Server("127.0.0.1", postgres.getPort(), "postgres", "");
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start embedded PostgreSQL", e);
        }
    }

    private static Server startContainer() {
        PostgreSQLContainer container = new PostgreSQLContainer("postgres:15-alpine")
                .withCommand("postgres", "-c", "fsync=off", "-c", "max_connections=300");
        container.start();
        Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "postgres-container-stop"));
        return new Server(
                container.getHost(),
                container.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT),
                container.getUsername(),
                container.getPassword());
    }

    static String env(String name, String defaultValue) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? defaultValue : value;
    }
}
