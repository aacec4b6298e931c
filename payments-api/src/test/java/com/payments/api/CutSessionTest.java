package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.common.DatabaseUnavailable;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgConnection;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * A statement given to a session the server has just cut (a failover ends every session) fails as "database
 * unavailable", so the merchant gets 503 + Retry-After, not 500: whatever the client library raises for it. A pooled
 * connection can be handed out in the moment between the cut and the pool's eviction, and a transaction's next
 * statement meets the cut session (DatabaseUnavailableTest once got 500 so in CI), and a session reset by TCP while its
 * statement is on its way or running (DatabaseUnavailableTest got 500 so in CI on 2026-12-06: a bare
 * {@code java.net.SocketException: Connection reset}).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class CutSessionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    Pool pool;

    @Inject
    Vertx vertx;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String url;

    @ConfigProperty(name = "quarkus.datasource.username")
    String user;

    /** Empty (trust) in tests. */
    @ConfigProperty(name = "quarkus.datasource.password")
    Optional<String> password;

    @Test
    void aStatementOnASessionTheServerCutIsDatabaseUnavailable() throws InterruptedException {
        SqlConnection session = pool.getConnection().await().atMost(WAIT);
        CountDownLatch closed = new CountDownLatch(1);
        session.closeHandler(closed::countDown);
        int pid = session.query("SELECT pg_backend_pid()")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getInteger(0);

        pool.preparedQuery("SELECT pg_terminate_backend($1)")
                .execute(Tuple.of(pid))
                .await()
                .atMost(WAIT);
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();

        Throwable failure = session.query("SELECT 1")
                .execute()
                .onItemOrFailure()
                .transform((rows, error) -> error)
                .await()
                .atMost(WAIT);
        assertThat(failure).isNotNull();
        assertThat(DatabaseUnavailable.causedBy(failure))
                .as("%s is database unavailable", failure)
                .isTrue();
        session.close().await().atMost(WAIT);
    }

    @Test
    void aStatementWhoseSessionIsResetIsDatabaseUnavailable() throws Exception {
        URI server = URI.create(url);
        try (ResettingProxy proxy = new ResettingProxy(server.getPort())) {
            PgConnectOptions options = new PgConnectOptions()
                    .setHost(InetAddress.getLoopbackAddress().getHostAddress())
                    .setPort(proxy.port())
                    .setDatabase(server.getPath().substring(1))
                    .setUser(user)
                    .setPassword(password.orElse(""));
            PgConnection session = PgConnection.connect(vertx, options).await().atMost(WAIT);
            var running = session.query("SELECT pg_sleep(5)")
                    .execute()
                    .onItemOrFailure()
                    .transform((rows, error) -> error)
                    .subscribeAsCompletionStage();
            Thread.sleep(300); // the statement is on the server

            proxy.resetEverySession();

            Throwable failure = running.get(10, TimeUnit.SECONDS);
            assertThat(failure).isNotNull();
            assertThat(DatabaseUnavailable.causedBy(failure))
                    .as("%s is database unavailable", failure)
                    .isTrue();
            session.close().await().indefinitely();
        }
    }

    /** Loopback TCP in front of the test server that can end its sessions with a reset (RST), as a host's loss does. */
    private static final class ResettingProxy implements AutoCloseable {
        private final ServerSocket listener;
        private final List<Socket> clients = new CopyOnWriteArrayList<>();

        ResettingProxy(int targetPort) throws IOException {
            listener = new ServerSocket();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            daemon(() -> {
                while (!listener.isClosed()) {
                    try {
                        Socket client = listener.accept();
                        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        clients.add(client);
                        daemon(() -> pump(client, target));
                        daemon(() -> pump(target, client));
                    } catch (IOException e) {
                        // closed
                    }
                }
            });
        }

        int port() {
            return listener.getLocalPort();
        }

        void resetEverySession() throws IOException {
            for (Socket client : clients) {
                client.setSoLinger(true, 0); // close sends RST, not FIN
                client.close();
            }
        }

        private static void pump(Socket from, Socket to) {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    out.write(buffer, 0, n);
                }
            } catch (IOException e) {
                // one side closed or reset
            }
        }

        private static void daemon(Runnable task) {
            Thread thread = new Thread(task, "resetting-proxy");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket client : clients) {
                client.close();
            }
        }
    }
}
