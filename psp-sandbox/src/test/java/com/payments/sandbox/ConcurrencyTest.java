package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Truly concurrent requests: 50 platform threads released together by a latch, one HTTP connection each. */
@QuarkusTest
class ConcurrencyTest {

    static final int THREADS = 50;
    static ExecutorService pool;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void start() {
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stop() {
        pool.shutdownNow();
    }

    private List<HttpResponse<String>> concurrently(IntFunction<HttpRequest> requests) throws Exception {
        CountDownLatch ready = new CountDownLatch(THREADS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> futures = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            HttpRequest request = requests.apply(i);
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            Callable<HttpResponse<String>> call = () -> {
                ready.countDown();
                go.await();
                return client.send(request, HttpResponse.BodyHandlers.ofString());
            };
            futures.add(pool.submit(call));
        }
        assertTrue(ready.await(10, TimeUnit.SECONDS));
        go.countDown();
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (Future<HttpResponse<String>> f : futures) {
            responses.add(f.get(30, TimeUnit.SECONDS));
        }
        return responses;
    }

    private HttpRequest post(String path, String key, String body) {
        return HttpRequest.newBuilder(URI.create(base + path.substring(1)))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    @Test
    void fiftyConcurrentChargesWithOneKeyMoveMoneyOnce() throws Exception {
        String ref = unique("pay");
        List<HttpResponse<String>> responses =
                concurrently(i -> post("/v1/charges", ref, Sandbox.chargeBody(ref, 777, "tok_visa")));
        String first = responses.get(0).body();
        long replays = 0;
        for (HttpResponse<String> r : responses) {
            assertEquals(200, r.statusCode());
            assertEquals(first, r.body(), "every answer is the one charge");
            if (r.headers().firstValue("Idempotent-Replayed").isPresent()) {
                replays++;
            }
        }
        assertEquals(THREADS - 1, replays);
        Counters c = counters(ref);
        assertEquals(THREADS, c.chargeRequests());
        assertEquals(1, c.chargeMovements());
    }

    @Test
    void fiftyConcurrentRefundsWithOneKeyMoveMoneyOnce() throws Exception {
        String charge = Sandbox.charge(unique("pay"), 1000, "tok_visa").path("id");
        String ref = unique("ref");
        String body = "{\"reference\":\"" + ref + "\",\"charge\":\"" + charge + "\",\"amount\":600}";
        List<HttpResponse<String>> responses = concurrently(i -> post("/v1/refunds", ref, body));
        for (HttpResponse<String> r : responses) {
            assertEquals(200, r.statusCode());
            assertEquals(responses.get(0).body(), r.body());
        }
        assertEquals(1, counters(ref).refundMovements());
    }

    @Test
    void concurrentRefundsWithDifferentKeysNeverExceedTheCharge() throws Exception {
        String charge = Sandbox.charge(unique("pay"), 1000, "tok_visa").path("id");
        String prefix = unique("ref");
        List<HttpResponse<String>> responses = concurrently(i -> post(
                "/v1/refunds",
                prefix + i,
                "{\"reference\":\"" + prefix + i + "\",\"charge\":\"" + charge + "\",\"amount\":30}"));
        long succeeded = responses.stream()
                .filter(r -> r.statusCode() == 200 && r.body().contains("\"succeeded\""))
                .count();
        long refused = responses.stream().filter(r -> r.statusCode() == 422).count();
        assertEquals(33, succeeded, "33 x 30 = 990 <= 1000 < 34 x 30");
        assertEquals(THREADS - 33, refused);
        long movements = 0;
        for (int i = 0; i < THREADS; i++) {
            movements += counters(prefix + i).refundMovements();
        }
        assertEquals(33, movements);
    }
}
