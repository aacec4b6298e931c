package com.payments.api;

import static io.restassured.RestAssured.given;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.eclipse.microprofile.config.ConfigProvider;

/** Calls and database checks shared by the tests (test thread: blocking on the pool is fine here). */
final class TestSupport {
    static final String KEY_A = "sk_test_demo_merchant_a";
    static final String KEY_B = "sk_test_demo_merchant_b";
    static final String ADMIN = "test-operator-token";

    /** Every table a merchant request could write to. */
    static final List<String> TABLES = List.of(
            "merchants",
            "merchant_api_keys",
            "payments",
            "payment_transitions",
            "refunds",
            "idempotency_keys",
            "idempotency_replays",
            "psp_calls",
            "outbox",
            "merchant_events",
            "ledger_transactions",
            "ledger_entries",
            "psp_webhook_events",
            "operations_queue");

    private static boolean warm;

    /**
     * The row counts {@code before} with {@code replays} more rows in {@code idempotency_replays}: a replayed, in
     * progress or mismatched use of a key changes nothing but is recorded there for the operator console's story.
     */
    static Map<String, Long> plusReplays(Map<String, Long> before, long replays) {
        Map<String, Long> expected = new LinkedHashMap<>(before);
        expected.merge("idempotency_replays", replays, Long::sum);
        return expected;
    }

    private TestSupport() {}

    /**
     * Once per JVM: the first PSP call of a cold JVM on a loaded machine can outlast the test timeout, so warm the
     * sandbox and the client, then close the circuit again, before tests make claims about single calls.
     */
    static synchronized void warmUp(String pspUrl, CircuitBreakerMaintenance breakers) {
        if (warm) {
            return;
        }
        for (int i = 0; i < 20; i++) {
            psp(pspUrl)
                    .contentType(ContentType.JSON)
                    .header("Idempotency-Key", unique("warm"))
                    .body("{\"reference\":\"" + unique("warm")
                            + "\",\"amount\":1,\"currency\":\"EUR\",\"source\":\"tok_visa\"}")
                    .post("/v1/charges");
        }
        for (int i = 0; i < 5; i++) {
            capture(KEY_A, unique("warm"), body(unique("warm"), 1, "EUR", "tok_visa"));
        }
        breakers.resetAll();
        warm = true;
    }

    static String body(String orderId, long amount, String currency, String source) {
        return "{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + ",\"currency\":\"" + currency
                + "\",\"source\":\"" + source + "\"}";
    }

    /** A request to the management interface (health, metrics, OpenAPI; the operator API), on its test port. */
    static RequestSpecification management() {
        return given().port(ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class));
    }

    static RequestSpecification merchant(String apiKey) {
        return given().header("Authorization", "Bearer " + apiKey);
    }

    static Response capture(String apiKey, String idempotencyKey, String body) {
        return merchant(apiKey)
                .header("Idempotency-Key", idempotencyKey)
                .contentType(ContentType.JSON)
                .body(body)
                .post("/v1/payments");
    }

    /** A merchant's POST of a JSON body with an Idempotency-Key to the service under test, for {@link #concurrently}. */
    static HttpRequest merchantPost(String path, String apiKey, String idempotencyKey, String json) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + io.restassured.RestAssured.port + path))
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", idempotencyKey)
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
    }

    /** Sends all requests at once: one thread each, released together by a latch; the answers in request order. */
    static List<HttpResponse<String>> concurrently(List<HttpRequest> requests) throws Exception {
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        int n = requests.size();
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(n);
        try {
            List<Future<HttpResponse<String>>> futures = new ArrayList<>();
            for (HttpRequest request : requests) {
                futures.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    return client.send(request, HttpResponse.BodyHandlers.ofString());
                }));
            }
            ready.await();
            go.countDown();
            List<HttpResponse<String>> responses = new ArrayList<>();
            for (Future<HttpResponse<String>> f : futures) {
                responses.add(f.get());
            }
            return responses;
        } finally {
            threads.shutdownNow();
        }
    }

    /** A merchant of a test's own (its rate limit above any test's load), created through the operator API. */
    record Shop(String key, UUID id) {}

    static Shop newShop(String namePrefix) {
        Response created = given().header("Authorization", "Bearer " + ADMIN)
                .contentType(ContentType.JSON)
                .body("{\"name\":\"" + unique(namePrefix) + "\",\"rateLimitPerSecond\":100000}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        return new Shop(created.path("apiKey"), UUID.fromString(created.path("merchantId")));
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    static long count(Pool pool, String sql, Object... args) {
        Row row = pool.preparedQuery(sql)
                .execute(Tuple.from(args))
                .await()
                .indefinitely()
                .iterator()
                .next();
        return row.getLong(0);
    }

    static Map<String, Long> rowCounts(Pool pool) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String table : TABLES) {
            counts.put(table, count(pool, "SELECT count(*) FROM " + table));
        }
        return counts;
    }

    static String paymentStatus(Pool pool, UUID id) {
        return pool.preparedQuery("SELECT status FROM payments WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
    }

    /**
     * Moves an AUTHORIZED payment's {@code authorized_at} {@code days} back (the expiry's tests). Only its authorization
     * sets it (V98's trigger), so the trigger is off for this one statement, in a transaction no other session sees it
     * off in.
     */
    static void ageAuthorization(Pool pool, UUID id, int days) {
        pool.withTransaction(conn -> conn.query("ALTER TABLE payments DISABLE TRIGGER payments_guard_transition")
                        .execute()
                        .flatMap(r -> conn.preparedQuery(
                                        "UPDATE payments SET authorized_at = authorized_at - make_interval(days => $2)"
                                                + " WHERE id = $1 AND status = 'AUTHORIZED'")
                                .execute(Tuple.of(id, days)))
                        .invoke(r -> {
                            if (r.rowCount() != 1) {
                                throw new IllegalStateException("payment " + id + " is not AUTHORIZED");
                            }
                        })
                        .flatMap(r -> conn.query("ALTER TABLE payments ENABLE TRIGGER payments_guard_transition")
                                .execute()))
                .await()
                .indefinitely();
    }

    /** The sandbox's counters for a reference (our payment id). */
    static Response pspCounters(String pspUrl, UUID paymentId) {
        return psp(pspUrl).get("/test/counters/" + paymentId);
    }

    /** A request to the sandbox (its own port, not the application's). */
    static RequestSpecification psp(String pspUrl) {
        java.net.URI uri = java.net.URI.create(pspUrl);
        return given().baseUri(uri.getScheme() + "://" + uri.getHost()).port(uri.getPort());
    }
}
