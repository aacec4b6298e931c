package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.api.config.ApplicationRoleRequirement;
import com.payments.contracts.SchemaVersion;
import com.payments.infra.Postgres;
import com.payments.infra.TlsPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A cluster of its own without the role payments_app, and a schema owner that may not create roles (a benchmark's
 * database, e.g. the side-by-side harness): the migrations still run, and grant nothing. A deployment's migration Job
 * ({@code payments.db.require-application-role=true}) refuses to run them there instead.
 */
class MigrationWithoutApplicationRoleTest {
    private static TlsPostgres server;

    @BeforeAll
    static void start() throws SQLException {
        server = TlsPostgres.start();
        try (Connection admin = connect("postgres", "postgres");
                Statement st = admin.createStatement()) {
            st.execute("CREATE ROLE owner_only LOGIN NOCREATEROLE NOSUPERUSER");
            st.execute("CREATE DATABASE lenient OWNER owner_only");
            st.execute("CREATE DATABASE strict OWNER owner_only");
        }
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void withoutTheRoleTheMigrationsRunAndGrantNothing() throws SQLException {
        flyway("lenient").load().migrate();

        try (Connection owner = connect("lenient", "owner_only");
                Statement st = owner.createStatement()) {
            assertThat(single(st, "SELECT max(version::int) FROM flyway_schema_history WHERE success"))
                    .isEqualTo(String.valueOf(SchemaVersion.REQUIRED));
            assertThat(single(st, "SELECT count(*) FROM pg_roles WHERE rolname = 'payments_app'"))
                    .isEqualTo("0");
            // The owner writes as the services would.
            st.execute("INSERT INTO merchants (name) VALUES ('bench')");
            assertThat(single(st, "SELECT status FROM merchants WHERE name = 'bench'"))
                    .isEqualTo("ACTIVE");
        }
    }

    @Test
    void aDeploymentsMigrationRefusesToRunWithoutTheRole() throws SQLException {
        FluentConfiguration configuration = flyway("strict");
        new ApplicationRoleRequirement(true).customize(configuration);

        assertThatThrownBy(() -> configuration.load().migrate())
                .isInstanceOf(FlywayException.class)
                .hasMessageContaining("The role payments_app does not exist");
        try (Connection owner = connect("strict", "owner_only");
                Statement st = owner.createStatement()) {
            assertThat(single(st, "SELECT count(*) FROM pg_tables WHERE tablename = 'payments'"))
                    .isEqualTo("0");
        }
    }

    private static FluentConfiguration flyway(String database) {
        return Postgres.withSessionLock(Flyway.configure()
                .dataSource(server.jdbcUrl("127.0.0.1", database, server.caFile()), "owner_only", "")
                .locations("classpath:db/migration"));
    }

    private static Connection connect(String database, String user) throws SQLException {
        return DriverManager.getConnection(server.jdbcUrl("127.0.0.1", database, server.caFile()), user, "");
    }

    private static String single(Statement st, String sql) throws SQLException {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
