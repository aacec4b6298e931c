package com.payments.recon;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainLauncher;
import io.quarkus.test.junit.main.QuarkusMainTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The reconciler as the CronJob runs it in production: over TLS in verify-full mode against the database's CA (JDBC
 * for the run, the reactive client for the schema check) and logged in as the application role, on a server that
 * refuses clients without TLS (docs/deployment.md, "TLS to PostgreSQL" and "Database roles").
 */
@QuarkusMainTest
@WithTestResource(value = TlsDatabaseTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class ReconcilerOverTlsTest {

    @Test
    void runsOverVerifiedTlsAsTheApplicationRole(QuarkusMainLauncher launcher) throws Exception {
        Path dir = Files.createTempDirectory("settlements");
        String unknownCharge = UUID.randomUUID().toString();
        Files.writeString(
                dir.resolve("2032-04-10.csv"),
                "psp_reference,type,reference,amount,fee,currency,settled_at\n" + "ch_tls,CHARGE," + unknownCharge
                        + ",100,3,EUR,2032-04-10T10:00:00Z\n");

        LaunchResult run =
                launcher.launch("--date=2032-04-10", "--source=" + dir.resolve("{date}.csv"), "--lookback=0");

        assertThat(run.exitCode()).as(run.getOutput()).isZero();
        try (Connection owner = TlsDatabaseTestResource.connectAsOwner();
                Statement st = owner.createStatement();
                ResultSet rs = st.executeQuery(
                        """
                        SELECT (SELECT count(*) FROM psp_settlements WHERE business_date = '2032-04-10'),
                               (SELECT count(*) FROM recon_breaks WHERE reference = '%s'),
                               (SELECT status FROM recon_runs WHERE business_date = '2032-04-10')"""
                                .formatted(unknownCharge))) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(1);
            assertThat(rs.getLong(2)).isEqualTo(1);
            assertThat(rs.getString(3)).isEqualTo("SUCCEEDED");
        }
    }
}
