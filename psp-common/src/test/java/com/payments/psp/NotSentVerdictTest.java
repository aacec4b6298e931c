package com.payments.psp;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import com.payments.psp.sandbox.SandboxPsp;
import com.payments.psp.sandbox.SandboxSettings;
import com.payments.psp.stripe.StripePsp;
import com.payments.psp.stripe.StripeSettings;
import io.vertx.mutiny.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * "Not sent" is the verdict of the first connect of a call's first attempt only (issue 37): once an attempt may have
 * reached the PSP, a later attempt that cannot connect leaves the charge UNKNOWN. Each adapter against a one-shot
 * server on loopback that takes one request, answers it (or not), and then refuses every connection.
 */
class NotSentVerdictTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static Vertx vertx;

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.closeAndAwait();
    }

    static ChargeRequest charge() {
        return new ChargeRequest("pay-" + System.nanoTime(), 2500, "EUR", "tok_visa");
    }

    static SandboxPsp sandbox(int port) {
        return new SandboxPsp(
                vertx,
                new SandboxSettings(
                        URI.create("http://127.0.0.1:" + port),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10),
                        4,
                        List.of("whsec_test"),
                        Duration.ofMinutes(5)),
                null,
                null,
                Clock.systemUTC());
    }

    static StripePsp stripe(int port) {
        return new StripePsp(
                vertx,
                new StripeSettings(
                        URI.create("http://127.0.0.1:" + port),
                        "sk_test_verdict",
                        List.of("whsec_test"),
                        StripeSettings.PINNED_API_VERSION,
                        Duration.ofSeconds(10),
                        Duration.ofMinutes(5),
                        2,
                        Duration.ofMillis(20),
                        Duration.ofHours(23),
                        Duration.ofHours(1),
                        4),
                null,
                null,
                Clock.systemUTC());
    }

    static ChargeResult charged(PspPort psp) {
        try {
            return psp.charge(charge()).await().atMost(WAIT);
        } finally {
            psp.close();
        }
    }

    @Test
    void sandboxChargeWhoseResendCannotConnectIsUnknown() throws Exception {
        try (OneShot psp = OneShot.closingUnanswered()) {
            ChargeResult result = charged(sandbox(psp.port()));
            assertThat(psp.requests()).as("the first attempt reached the PSP").isEqualTo(1);
            assertThat(result.status()).isEqualTo(ChargeResult.Status.UNKNOWN);
            assertThat(result.neverSent()).as("%s", result).isFalse();
        }
    }

    @Test
    void stripeChargeWhoseRetryAfterA429CannotConnectIsUnknown() throws Exception {
        String body = "{\"error\":{\"type\":\"invalid_request_error\",\"code\":\"rate_limit\"}}";
        try (OneShot psp = OneShot.answering("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body)) {
            ChargeResult result = charged(stripe(psp.port()));
            assertThat(psp.requests()).isEqualTo(1);
            assertThat(result.status()).isEqualTo(ChargeResult.Status.UNKNOWN);
            assertThat(result.neverSent()).as("%s", result).isFalse();
        }
    }

    @Test
    void aFirstConnectThatFailsIsNotSentForBothAdapters() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        assertThat(charged(sandbox(closedPort)).neverSent()).isTrue();
        assertThat(charged(stripe(closedPort)).neverSent()).isTrue();
    }

    /**
     * Takes one request on loopback, writes {@code answer} (null: none) and then closes its listening socket (every
     * later connection is refused) before it closes the request's connection.
     */
    static final class OneShot implements AutoCloseable {
        private final ServerSocket listener;
        private final CompletableFuture<Integer> served = new CompletableFuture<>();

        static OneShot closingUnanswered() throws IOException {
            return new OneShot(null);
        }

        static OneShot answering(String answer) throws IOException {
            return new OneShot(answer);
        }

        private OneShot(String answer) throws IOException {
            listener = new ServerSocket();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread thread = new Thread(() -> serve(answer), "one-shot-psp");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        int requests() throws Exception {
            return served.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        private void serve(String answer) {
            try (Socket client = listener.accept()) {
                readRequest(client.getInputStream());
                if (answer != null) {
                    client.getOutputStream().write(answer.getBytes(StandardCharsets.US_ASCII));
                    client.getOutputStream().flush();
                }
                listener.close();
                served.complete(1);
            } catch (IOException e) {
                served.completeExceptionally(e);
            }
        }

        /** Headers up to the blank line, then Content-Length bytes of body. */
        private static void readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("closed before the request ended");
                }
                head.write(b);
            }
            int length = 0;
            for (String line : head.toString(StandardCharsets.US_ASCII).split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(
                            line.substring("content-length:".length()).trim());
                }
            }
            in.readNBytes(length);
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }
}
