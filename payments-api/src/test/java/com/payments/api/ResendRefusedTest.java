package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandbox;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * Issue 37, item 1, through a real TCP path: a proxy on loopback in front of the real psp-sandbox lets the charge
 * through, drops the connection before the sandbox's answer reaches us and refuses every new connection. The sandbox
 * adapter sends the charge once more at once (the connection closed unanswered) and cannot connect: the first attempt
 * reached the PSP and charged, so the capture is UNKNOWN (202) with its payment and key kept, never "not sent" (503,
 * payment and key dropped: the merchant's retry would charge a second time under a new payment id).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = ResendRefusedTest.ProxiedSandbox.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class ResendRefusedTest {
    @Inject
    Pool pool;

    @Inject
    PaymentResolver resolver;

    @Inject
    CircuitBreakerMaintenance breakers;

    /** The proxy of this class's application, injected by {@link ProxiedSandbox}. */
    DroppingProxy proxy;

    @Test
    void aResendThatCannotConnectAfterTheChargeWentThroughIsUnknownAndResolvedCaptured() {
        // Read here, not injected: the property exists only while this class's resource runs.
        String sandboxUrl = ConfigProvider.getConfig().getValue("proxied-sandbox.url", String.class);
        assertThat(ConfigProvider.getConfig().getValue("psp.sandbox.url", String.class))
                .as("the adapter calls this proxy")
                .isEqualTo("http://127.0.0.1:" + proxy.port);
        capture(KEY_A, unique("warm"), body(unique("warm"), 1, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
        breakers.resetAll();

        String key = unique("key");
        String json = body(unique("order"), 3100, "EUR", "tok_visa");
        proxy.dropNextAnswerThenRefuse();
        Response unknown = capture(KEY_A, key, json);

        assertThat(proxy.isDown()).as("the proxy dropped an answer").isTrue();
        assertThat(unknown.statusCode()).as(unknown.asString()).isEqualTo(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(unknown.path("id"));
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND status = 'UNKNOWN'", id))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", key))
                .isEqualTo(1);
        assertThat(chargeMovements(sandboxUrl, id))
                .as("charged once by the first attempt")
                .isEqualTo(1);

        proxy.up();
        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return paymentStatus(pool, id).equals("CAPTURED");
                });

        assertThat(chargeMovements(sandboxUrl, id)).isEqualTo(1);
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("id")).isEqualTo(id.toString());
        assertThat(replay.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(chargeMovements(sandboxUrl, id)).isEqualTo(1);
    }

    private static int chargeMovements(String sandboxUrl, UUID id) {
        return TestSupport.pspCounters(sandboxUrl, id)
                .then()
                .statusCode(200)
                .extract()
                .path("chargeMovements");
    }

    /** A psp-sandbox of this class's own, and the proxy in front of it that the sandbox adapter calls. */
    public static class ProxiedSandbox implements QuarkusTestResourceLifecycleManager {
        private DroppingProxy proxy;
        private PspSandbox sandbox;

        @Override
        public Map<String, String> start() {
            sandbox = PspSandbox.start(Map.of());
            try {
                proxy = new DroppingProxy(sandbox.port());
            } catch (IOException e) {
                throw new IllegalStateException("Cannot start the proxy", e);
            }
            // The sandbox adapter's own URL; a global test resource of other classes sets psp.url.
            return Map.of("psp.sandbox.url", "http://127.0.0.1:" + proxy.port, "proxied-sandbox.url", sandbox.url());
        }

        @Override
        public void inject(TestInjector testInjector) {
            testInjector.injectIntoFields(proxy, new TestInjector.MatchesType(DroppingProxy.class));
        }

        @Override
        public void stop() {
            if (proxy != null) {
                proxy.close();
            }
            if (sandbox != null) {
                sandbox.stop();
            }
        }
    }

    /**
     * A TCP proxy on loopback (plain java.net, a thread per direction). Armed, it passes the next request to the target
     * and, when the answer starts to come back, closes its listening socket (new connections are refused) and every
     * client connection, without forwarding a byte of the answer. {@link #up()} listens on the same port again.
     */
    static final class DroppingProxy implements AutoCloseable {
        final int port;
        private final int targetPort;
        private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
        private final AtomicBoolean armed = new AtomicBoolean();
        private volatile boolean down;
        private volatile ServerSocket listener;

        DroppingProxy(int targetPort) throws IOException {
            this.targetPort = targetPort;
            this.listener = listen(0);
            this.port = listener.getLocalPort();
        }

        void dropNextAnswerThenRefuse() {
            armed.set(true);
        }

        boolean isDown() {
            return down && listener.isClosed();
        }

        void up() {
            down = false;
            try {
                listener = listen(port);
            } catch (IOException e) {
                throw new IllegalStateException("Cannot listen on " + port + " again", e);
            }
        }

        private ServerSocket listen(int on) throws IOException {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), on));
            daemon(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket client = server.accept();
                        if (down) {
                            // accepted while the listener was closing: refused all the same, nothing forwarded
                            closeQuietly(client);
                            continue;
                        }
                        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                        sockets.add(client);
                        sockets.add(target);
                        daemon(() -> pump(client, target, false));
                        daemon(() -> pump(target, client, true));
                    } catch (IOException e) {
                        // closed: refusing connections until up()
                    }
                }
            });
            return server;
        }

        private void pump(Socket from, Socket to, boolean answers) {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    if (answers && armed.compareAndSet(true, false)) {
                        // the target answered: the request went through. Refuse new connections first, then drop.
                        down = true;
                        listener.close();
                        sockets.forEach(DroppingProxy::closeQuietly);
                        sockets.clear();
                        return;
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        private static void daemon(Runnable task) {
            Thread thread = new Thread(task, "dropping-proxy");
            thread.setDaemon(true);
            thread.start();
        }

        private static void closeQuietly(Socket socket) {
            try {
                socket.close();
            } catch (IOException e) {
                // already closed
            }
        }

        @Override
        public void close() {
            try {
                listener.close();
            } catch (IOException e) {
                // already closed
            }
            sockets.forEach(DroppingProxy::closeQuietly);
        }
    }
}
