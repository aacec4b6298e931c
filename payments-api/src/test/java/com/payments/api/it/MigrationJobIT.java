package com.payments.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.contracts.SchemaVersion;
import com.payments.infra.Postgres;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.junit.main.Launch;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainIntegrationTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * The packaged payments-api (jar or native executable) as the migration Job: on an empty database it applies every
 * migration packaged in it and exits 0. In a native executable this fails when the SQL files were left out of the
 * image (Flyway then finds no migration and the schema stays empty).
 */
@QuarkusMainIntegrationTest
@TestProfile(MigrationJobProfile.class)
class MigrationJobIT {
    Postgres.Database database;

    @Test
    @Launch(exitCode = 0)
    void migratesAnEmptyDatabaseToTheRequiredVersionAndExits(LaunchResult result) throws SQLException {
        try (Connection connection =
                        DriverManager.getConnection(database.jdbcUrl(), database.user(), database.password());
                Statement statement = connection.createStatement()) {
            try (ResultSet rs =
                    statement.executeQuery("SELECT max(version::int), bool_and(success) FROM flyway_schema_history"
                            + " WHERE version IS NOT NULL")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(SchemaVersion.REQUIRED);
                assertThat(rs.getBoolean(2)).isTrue();
            }
            try (ResultSet rs = statement.executeQuery("SELECT to_regclass('public.payments') IS NOT NULL")) {
                rs.next();
                assertThat(rs.getBoolean(1)).isTrue();
            }
        }
    }
}
