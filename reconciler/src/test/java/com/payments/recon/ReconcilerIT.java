package com.payments.recon;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.Postgres;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainIntegrationTest;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The packaged reconciler (jar, or the native executable with {@code -Dnative}) as the CronJob runs it, over a small
 * settlement file: 1 when the file cannot be read, 0 while a break is new, 2 once a later run still sees the break
 * (report-after 0 s here). Each launch is a new process on the same database.
 */
@QuarkusMainIntegrationTest
@TestProfile(ReconcilerIT.Profile.class)
class ReconcilerIT {
    private static final LocalDate DAY = LocalDate.parse("2033-03-10");

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // plain-text logs, as the launcher and the assertions on the summary line read them
            return Map.of("recon.report-after", "0s", "quarkus.log.console.json.enabled", "false");
        }

        /** Only these start: with disableGlobalTestResources, a profile's own resources are the suite's. */
        @Override
        public List<TestResourceEntry> testResources() {
            // the CronJob logs in as the application role (k8s/base/reconciler-cronjob.yaml)
            return List.of(
                    new TestResourceEntry(PostgresTestResource.class, Map.of("login", "app", "keep", "reconciler-it")));
        }

        @Override
        public boolean disableGlobalTestResources() {
            return true;
        }
    }

    Postgres.Database database;

    @Test
    void aMissingFileExitsOneANewBreakZeroTheSameBreakSeenAgainTwo(QuarkusMainLauncher launcher) {
        // First: the test resources start with a launch (each launch restarts them; "keep" gives every launch the
        // same database), and only then is the database injected here.
        LaunchResult unreadable = launcher.launch(
                "--date=" + DAY, "--source=/nonexistent/" + UUID.randomUUID() + "/{date}.csv", "--lookback=0");
        assertThat(unreadable.exitCode()).as(unreadable.getOutput()).isEqualTo(1);
        assertThat(unreadable.getOutput()).contains("\"status\":\"FAILED\"");

        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(database.jdbcUrl());
        ds.setUser(database.user());
        ds.setPassword(database.password());
        Fixture fixture = new Fixture(ds);
        Instant at = Fixture.at(DAY, "10:00:00");
        String matched = fixture.captured(2500, "EUR", at);
        // captured by us, not in the file: a MISSING_AT_PSP break, new in the first run, reported by the second
        fixture.captured(1200, "EUR", Fixture.at(DAY, "11:00:00"));
        String[] args = {"--date=" + DAY, "--source=" + fixture.source(), "--lookback=0"};

        fixture.writeFile(DAY, List.of(Fixture.charge(matched, 2500, "EUR", at)));
        LaunchResult clean = launcher.launch(args);
        assertThat(clean.exitCode()).as(clean.getOutput()).isZero();
        assertThat(clean.getOutput())
                .contains("\"matched\":1")
                .contains("\"MISSING_AT_PSP\":1")
                .contains("\"status\":\"SUCCEEDED\"");

        LaunchResult again = launcher.launch(args);
        assertThat(again.exitCode()).as(again.getOutput()).isEqualTo(2);
        assertThat(again.getOutput()).contains("\"reportedBreaks\":1");
    }
}
