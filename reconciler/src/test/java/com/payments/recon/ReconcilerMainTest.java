package com.payments.recon;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.main.Launch;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The command-mode entry point: arguments, the summary line and the exit codes a Kubernetes Job reports. */
@QuarkusMainTest
@WithTestResource(value = OneDatabaseTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class ReconcilerMainTest {

    @Test
    @Launch(
            value = {"--date=2032-01-10", "--source=/nonexistent/{date}.csv", "--lookback=0"},
            exitCode = 1)
    void unavailableFileExitsOne(LaunchResult result) {
        assertThat(result.getOutput()).contains("\"status\":\"FAILED\"");
    }

    @Test
    @Launch(
            value = {"--date=2032-01-10", "--source=/tmp/{date}.csv", "--window=soon"},
            exitCode = 1)
    void badArgumentsExitOne() {}

    @Test
    void aRetryExitsZeroAndTheNextDaysRunExitsTwo(QuarkusMainLauncher launcher) throws Exception {
        Path dir = Files.createTempDirectory("settlements");
        Files.writeString(
                dir.resolve("2032-02-10.csv"),
                "psp_reference,type,reference,amount,fee,currency,settled_at\n" + "ch_x,CHARGE," + UUID.randomUUID()
                        + ",100,33,EUR,2032-02-10T10:00:00Z\n");
        String[] args = {"--date=2032-02-11", "--source=" + dir.resolve("{date}.csv"), "--lookback=1"};
        Files.writeString(
                dir.resolve("2032-02-11.csv"), "psp_reference,type,reference,amount,fee,currency,settled_at\n");

        LaunchResult first = launcher.launch(args);
        assertThat(first.exitCode()).as(first.getOutput()).isZero();
        assertThat(first.getOutput().lines().filter(l -> l.startsWith("{\"businessDate\"")))
                .hasSize(2);

        // A retry minutes later (Job back-off, manual re-run) is not the second sighting.
        LaunchResult retry = launcher.launch(args);
        assertThat(retry.exitCode()).as(retry.getOutput()).isZero();
        assertThat(retry.getOutput()).contains("\"reportedBreaks\":0");

        // The next day's run is: the break is reported and the Job fails with 2.
        try (Connection c = OneDatabaseTestResource.connect()) {
            Fixture.passTime(c, Duration.ofDays(1));
        }
        LaunchResult nextDay = launcher.launch(args);
        assertThat(nextDay.exitCode()).as(nextDay.getOutput()).isEqualTo(2);
        assertThat(nextDay.getOutput()).contains("\"reportedBreaks\":1");
    }
}
