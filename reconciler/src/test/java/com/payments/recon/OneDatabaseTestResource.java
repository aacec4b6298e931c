package com.payments.recon;

import com.payments.infra.Postgres;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Properties;

/**
 * One migrated database for every launch of {@link ReconcilerMainTest}: each {@code QuarkusMainLauncher} launch is a
 * new application (and class loader), and the debounce needs two runs against the same data. The database is kept in a
 * system property, the one thing the launches share.
 */
public class OneDatabaseTestResource implements QuarkusTestResourceLifecycleManager {
    // No dot: a "recon." system property would fail validation of the recon.* config mapping.
    private static final String KEY = "reconMainTestDatabase";

    @Override
    public Map<String, String> start() {
        synchronized (System.getProperties()) {
            String cached = System.getProperty(KEY);
            if (cached == null) {
                Postgres.Database db = Postgres.freshDatabase("recon_main");
                cached = String.join("\n", db.jdbcUrl(), db.reactiveUrl(), db.user(), db.password());
                System.setProperty(KEY, cached);
            }
            String[] p = cached.split("\n", -1);
            return Map.of(
                    "quarkus.datasource.jdbc.url", p[0],
                    "quarkus.datasource.reactive.url", p[1],
                    "quarkus.datasource.username", p[2],
                    "quarkus.datasource.password", p[3]);
        }
    }

    /** A JDBC connection to the shared database, for a test that changes data between launches. */
    static Connection connect() throws SQLException {
        String[] p = System.getProperty(KEY).split("\n", -1);
        Properties login = new Properties();
        login.setProperty("user", p[2]);
        login.setProperty("password", p[3]);
        // The driver itself, not DriverManager: the test and the launched application have different class loaders.
        return new org.postgresql.Driver().connect(p[0], login);
    }

    @Override
    public void stop() {
        // The embedded server lives as long as the JVM.
    }
}
