package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.pspFaults;
import static com.payments.system.Merchant.text;
import static com.payments.system.Merchant.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * payments-api stopped as Kubernetes stops it (SIGTERM) while captures are at a slow PSP and clients keep capturing
 * (docs/deployment.md, "Graceful shutdown"): every capture it accepted gets its answer, on the HTTP/1.1 keep-alive
 * connections opened before the signal too; a request that arrives after the signal gets an answer (a capture, or 503
 * {@code service_stopping} that stored nothing) or a refused connection, never a cut one; no payment is left
 * PROCESSING; and a request refused with 503 succeeds when sent again with the same key to a new process.
 *
 * <p>{@code -Dgraceful-shutdown.runs=N} runs the scenario N times, each with a new payments-api (default 1).
 */
class GracefulShutdownTest {
    private static final int CAPTURES = 8;
    private static final int LOAD_CLIENTS = 4;
    private static final long PSP_LATENCY_MS = 2000;
    private static Postgres.Database db;
    private static PspSandbox sandbox;

    /** One request's order, key and outcome: its status (with the problem's code for a 503), refused or cut. */
    private record Outcome(String orderId, String key, String result) {}

    @BeforeAll
    static void startServices() {
        db = Postgres.freshDatabase("shutdown").asApp();
        sandbox = PspSandbox.start(Map.of());
    }

    @AfterAll
    static void stopServices() {
        sandbox.close();
    }

    @TestFactory
    Stream<DynamicTest> sigtermInTheMiddleOfCapturesAnswersEveryAcceptedOne() {
        return IntStream.rangeClosed(1, Integer.getInteger("graceful-shutdown.runs", 1))
                .mapToObj(run -> DynamicTest.dynamicTest("run " + run, () -> scenario("sd" + run)));
    }

    private static void scenario(String name) throws Exception {
        pspFaults(sandbox.url(), "{\"latencyFixedMs\":0}");
        // the production delay (the test profile turns it off for payments-api's in-process tests)
        QuarkusProcess api = Stack.paymentsApi(db, sandbox.url(), Map.of("quarkus.shutdown.delay", "5s"));
        try {
            Merchant.use(api);
            Merchant.warmUp(sandbox.url());
            stopUnderLoad(api, unique(name));
        } finally {
            if (api.awaitExit(Duration.ZERO) == null) {
                api.kill();
            }
        }
    }

    private static void stopUnderLoad(QuarkusProcess api, String run) throws Exception {
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        // the connections the captures run on: opened and kept alive before the signal
        for (CompletableFuture<HttpResponse<String>> warm : send(api, client, unique("keepalive"))) {
            assertThat(warm.join().statusCode()).isEqualTo(201);
        }
        pspFaults(sandbox.url(), "{\"latencyFixedMs\":" + PSP_LATENCY_MS + "}");

        List<CompletableFuture<HttpResponse<String>>> captures = send(api, client, run);
        // every capture is at the PSP: its payment is PROCESSING, and the sandbox holds its answer 2 s
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> Long.parseLong(text(
                                db,
                                "SELECT count(*) FROM payments WHERE order_id LIKE ? AND status = 'PROCESSING'",
                                run + "-%"))
                        == CAPTURES);
        // and clients that keep capturing through the stop, on the same kept-alive connections and new ones
        List<CompletableFuture<List<Outcome>>> load = new ArrayList<>();
        for (int n = 0; n < LOAD_CLIENTS; n++) {
            String prefix = run + "-load" + n;
            load.add(CompletableFuture.supplyAsync(() -> keepCapturing(api, client, prefix)));
        }
        Thread.sleep(300);
        long signalled = System.nanoTime();
        api.terminate();

        List<String> outcomes = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> capture : captures) {
            try {
                outcomes.add(String.valueOf(capture.join().statusCode()));
            } catch (CompletionException e) {
                outcomes.add("cut: " + e.getCause());
            }
        }
        List<Outcome> loadOutcomes = new ArrayList<>();
        load.forEach(client1 -> loadOutcomes.addAll(client1.join()));
        Integer exit = api.awaitExit(Duration.ofSeconds(40));
        long stopMillis = (System.nanoTime() - signalled) / 1_000_000;
        String log = tail(Files.readString(api.log()));

        assertThat(outcomes)
                .as("the answers to captures accepted before SIGTERM; the process's log:\n%s", log)
                .allMatch(outcome -> outcome.equals("201") || outcome.equals("202"));
        assertThat(loadOutcomes.stream().map(Outcome::result).toList())
                .as(
                        "the answers to the clients that kept capturing through the stop: an answer, or a connection"
                                + " refused (never accepted), never a cut one; the process's log:\n%s",
                        log)
                .isNotEmpty()
                .allMatch(result -> result.matches("201|202|429|503 .*|refused"));
        assertThat(exit)
                .as("exit code after SIGTERM (null: still running after 40 s)")
                .isNotNull();
        assertThat(stopMillis)
                .as("the stop took (ms): the delay, then the drain")
                .isBetween(5_000L, 25_000L);
        long answered =
                loadOutcomes.stream().filter(o -> o.result().matches("201|202")).count();
        assertThat(text(
                        db,
                        "SELECT coalesce(string_agg(status || '×' || n, ' ' ORDER BY status), '') FROM "
                                + "(SELECT status, count(*) n FROM payments WHERE order_id LIKE ? GROUP BY status) s",
                        run + "-%"))
                .as("the run's payments once the process has ended: one per answered capture, none PROCESSING")
                .isEqualTo("CAPTURED×" + (CAPTURES + answered));

        // a request refused because the instance was stopping stored nothing: the same key succeeds elsewhere
        List<Outcome> refused = loadOutcomes.stream()
                .filter(o -> o.result().startsWith("503 service_stopping"))
                .toList();
        pspFaults(sandbox.url(), "{\"latencyFixedMs\":0}");
        try (QuarkusProcess next = Stack.paymentsApi(db, sandbox.url(), Map.of())) {
            for (Outcome o : refused) {
                HttpResponse<String> retry =
                        client.send(request(next, o.orderId(), o.key()), HttpResponse.BodyHandlers.ofString());
                assertThat(retry.statusCode())
                        .as("%s sent again with its key after 503 service_stopping: %s", o.orderId(), retry.body())
                        .isEqualTo(201);
                assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
            }
        }
        assertThat(text(db, "SELECT count(*) FROM payments WHERE order_id LIKE ? AND status = 'CAPTURED'", run + "-%"))
                .as("the run's captured payments once the refused requests were sent again")
                .isEqualTo(String.valueOf(CAPTURES + answered + refused.size()));
    }

    /**
     * Captures one after the other until the instance says it is stopping (503 {@code service_stopping}: a client of
     * a Service would send the next one to another pod), the port refuses the connection, or 40 s pass.
     */
    private static List<Outcome> keepCapturing(QuarkusProcess api, HttpClient client, String prefix) {
        List<Outcome> outcomes = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(40).toNanos();
        for (int i = 0; System.nanoTime() < end; i++) {
            String orderId = prefix + "-" + i;
            String key = unique(orderId);
            try {
                HttpResponse<String> response =
                        client.send(request(api, orderId, key), HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                if (status == 503) {
                    String code = response.body().replaceAll(".*\"code\":\"([a-z_]+)\".*", "$1");
                    outcomes.add(new Outcome(orderId, key, "503 " + code));
                    if (code.equals("service_stopping")) {
                        return outcomes;
                    }
                } else {
                    outcomes.add(new Outcome(orderId, key, String.valueOf(status)));
                }
                if (status == 503 || status == 429) {
                    Thread.sleep(100); // Retry-After says later; only the next outcome matters here
                }
            } catch (ConnectException e) {
                outcomes.add(new Outcome(orderId, key, "refused"));
                return outcomes;
            } catch (IOException e) {
                outcomes.add(new Outcome(orderId, key, "cut: " + e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return outcomes;
            }
        }
        return outcomes;
    }

    /** {@link #CAPTURES} concurrent captures of new orders named {@code prefix-i}. */
    private static List<CompletableFuture<HttpResponse<String>>> send(
            QuarkusProcess api, HttpClient client, String prefix) {
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < CAPTURES; i++) {
            String orderId = prefix + "-" + i;
            sent.add(client.sendAsync(request(api, orderId, unique(orderId)), HttpResponse.BodyHandlers.ofString()));
        }
        return sent;
    }

    private static HttpRequest request(QuarkusProcess api, String orderId, String key) {
        return HttpRequest.newBuilder(URI.create(api.url() + "/v1/payments"))
                .timeout(Duration.ofSeconds(40))
                .header("Authorization", "Bearer " + KEY_A)
                .header("Idempotency-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body(orderId, 1000, "EUR", "tok_visa")))
                .build();
    }

    private static String tail(String log) {
        return log.length() <= 6000 ? log : log.substring(log.length() - 6000);
    }
}
