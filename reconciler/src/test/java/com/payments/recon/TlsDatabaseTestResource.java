package com.payments.recon;

import com.payments.infra.Postgres;
import com.payments.infra.TlsPostgres;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Properties;
import org.flywaydb.core.Flyway;

/**
 * A PostgreSQL of its own that accepts only TLS ({@link TlsPostgres}), migrated by the owner through JDBC in
 * verify-full mode as the migration Job does, and the production datasource settings for it: every connection of the
 * reconciler (JDBC for the run, the reactive client for the schema check) verify-full against the generated CA, as the
 * application role. One server and database per JVM (each launch of a main test is a new class loader; the settings
 * are kept in a system property).
 */
public class TlsDatabaseTestResource implements QuarkusTestResourceLifecycleManager {
    private static final String KEY = "reconTlsTestDatabase";
    static final String DATABASE = "payments";

    @Override
    public Map<String, String> start() {
        synchronized (System.getProperties()) {
            if (System.getProperty(KEY) == null) {
                TlsPostgres server = TlsPostgres.start(); // stopped at JVM exit
                String ownerUrl = server.jdbcUrl("localhost", "postgres", server.caFile());
                try (Connection c = connect(ownerUrl, "postgres", "");
                        Statement st = c.createStatement()) {
                    st.execute("CREATE DATABASE " + DATABASE);
                    st.execute("CREATE ROLE " + Postgres.APP_ROLE + " LOGIN PASSWORD '" + Postgres.APP_PASSWORD + "'");
                } catch (SQLException e) {
                    throw new IllegalStateException("Cannot prepare the TLS database", e);
                }
                Postgres.withSessionLock(Flyway.configure(Thread.currentThread().getContextClassLoader())
                                .dataSource(server.jdbcUrl("localhost", DATABASE, server.caFile()), "postgres", "")
                                .locations("classpath:db/migration"))
                        .load()
                        .migrate();
                System.setProperty(KEY, server.port() + "\n" + server.caFile());
            }
            String[] p = System.getProperty(KEY).split("\n", -1);
            String ca = p[1];
            return Map.of(
                    "quarkus.datasource.jdbc.url",
                    "jdbc:postgresql://localhost:" + p[0] + "/" + DATABASE + "?sslmode=verify-full&sslrootcert=" + ca,
                    "quarkus.datasource.reactive.url",
                    "postgresql://localhost:" + p[0] + "/" + DATABASE,
                    "quarkus.datasource.reactive.postgresql.ssl-mode",
                    "verify-full",
                    "quarkus.datasource.reactive.trust-certificate-pem",
                    "true",
                    "quarkus.datasource.reactive.trust-certificate-pem.certs",
                    ca,
                    "quarkus.datasource.reactive.hostname-verification-algorithm",
                    "HTTPS",
                    "quarkus.datasource.username",
                    Postgres.APP_ROLE,
                    "quarkus.datasource.password",
                    Postgres.APP_PASSWORD);
        }
    }

    /** The owner's JDBC connection (verify-full) to the test database. */
    static Connection connectAsOwner() throws SQLException {
        String[] p = System.getProperty(KEY).split("\n", -1);
        return connect(
                "jdbc:postgresql://localhost:" + p[0] + "/" + DATABASE + "?sslmode=verify-full&sslrootcert="
                        + Path.of(p[1]),
                "postgres",
                "");
    }

    /** The driver itself, not DriverManager: the test and the launched application have different class loaders. */
    private static Connection connect(String url, String user, String password) throws SQLException {
        Properties login = new Properties();
        login.setProperty("user", user);
        login.setProperty("password", password);
        return new org.postgresql.Driver().connect(url, login);
    }

    @Override
    public void stop() {
        // The server lives as long as the JVM.
    }
}
