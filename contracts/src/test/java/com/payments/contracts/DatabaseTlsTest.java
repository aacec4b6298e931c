package com.payments.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.infra.TlsPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.Row;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS to PostgreSQL in verify-full mode (docs/deployment.md, "TLS to PostgreSQL") against a server with
 * {@code ssl=on} and a CA generated for this run: the way the services configure it, for both clients. JDBC (the
 * migration Job's Flyway, the reconciler) takes {@code sslmode=verify-full&sslrootcert=<CA file>} in its URL; the
 * reactive client (every service) takes what {@code quarkus.datasource.reactive.postgresql.ssl-mode=verify-full},
 * {@code quarkus.datasource.reactive.trust-certificate-pem.certs=<CA file>} and
 * {@code quarkus.datasource.reactive.hostname-verification-algorithm=HTTPS} set. Trusting another CA fails both.
 */
class DatabaseTlsTest {
    private static TlsPostgres server;
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        server = TlsPostgres.start();
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        server.close();
    }

    @Test
    void jdbcVerifyFullSucceedsWithTheServersCa() throws SQLException {
        for (String host : new String[] {"127.0.0.1", "localhost"}) {
            try (Connection c = DriverManager.getConnection(jdbcUrl(host, server.caFile()), "postgres", "");
                    Statement st = c.createStatement();
                    ResultSet rs =
                            st.executeQuery("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
                rs.next();
                assertThat(rs.getBoolean("ssl")).as(host).isTrue();
                assertThat(rs.getString("version")).startsWith("TLSv1.");
            }
        }
    }

    @Test
    void jdbcVerifyFullFailsWithAnotherCa() {
        assertThatThrownBy(() -> DriverManager.getConnection(jdbcUrl("127.0.0.1", server.wrongCaFile()), "postgres", "")
                        .close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("SSL");
    }

    @Test
    void theServerRefusesClientsWithoutTls() {
        assertThatThrownBy(() -> DriverManager.getConnection(
                                "jdbc:postgresql://127.0.0.1:" + server.port() + "/postgres?sslmode=disable",
                                "postgres",
                                "")
                        .close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("no encryption");
    }

    @Test
    void reactiveVerifyFullSucceedsWithTheServersCa() throws Exception {
        for (String host : new String[] {"127.0.0.1", "localhost"}) {
            Row row = connectAndQuery(host, server.caFile());
            assertThat(row.getBoolean("ssl")).as(host).isTrue();
        }
    }

    @Test
    void reactiveVerifyFullFailsWithAnotherCa() {
        assertThatThrownBy(() -> connectAndQuery("127.0.0.1", server.wrongCaFile()))
                .hasStackTraceContaining("SSL handshake failed");
    }

    @Test
    void reactiveVerifyFullRefusesAServerWithoutTls() {
        // The shared test server of Postgres, or the embedded one, has no TLS: verify-full must not fall back.
        var plain = com.payments.infra.Postgres.server();
        PgConnectOptions options = verifyFull(plain.host(), server.caFile())
                .setPort(plain.port())
                .setUser(plain.user())
                .setPassword(plain.password());
        assertThatThrownBy(() -> PgConnection.connect(vertx, options)
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(30, TimeUnit.SECONDS))
                .hasStackTraceContaining("SSL");
    }

    private static String jdbcUrl(String host, Path ca) {
        return server.jdbcUrl(host, "postgres", ca);
    }

    /** What Quarkus builds from the three quarkus.datasource.reactive.* settings above. */
    private static PgConnectOptions verifyFull(String host, Path ca) {
        PgConnectOptions options = new PgConnectOptions()
                .setHost(host)
                .setPort(server.port())
                .setDatabase("postgres")
                .setUser("postgres")
                .setPassword("")
                .setSslMode(SslMode.VERIFY_FULL);
        options.setPemTrustOptions(new PemTrustOptions().addCertPath(ca.toString()));
        options.setHostnameVerificationAlgorithm("HTTPS");
        return options;
    }

    private static Row connectAndQuery(String host, Path ca) throws Exception {
        return PgConnection.connect(vertx, verifyFull(host, ca))
                .compose(conn -> conn.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                        .execute()
                        .eventually(v -> conn.close()))
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS)
                .iterator()
                .next();
    }
}
