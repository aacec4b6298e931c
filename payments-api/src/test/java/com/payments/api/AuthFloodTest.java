package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.merchants.MerchantAdminService;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A flood of unknown API keys from one address costs a bounded number of database lookups and is answered 429 once
 * the address's failure allowance is used up, while good keys from the same address keep working, also across the
 * known-key cache's expiry (1 s in tests). The limits are the production defaults (20 failures a minute); the other
 * test classes run with a limit high enough never to be reached.
 */
@QuarkusTest
@TestProfile(AuthFloodTest.ProductionLimits.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class AuthFloodTest {
    static final int MAX_FAILURES = 20;
    static final Duration WINDOW = Duration.ofMinutes(1);

    public static class ProductionLimits implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "payments.auth.max-failures", Integer.toString(MAX_FAILURES),
                    "payments.auth.failure-window", WINDOW.toString(),
                    "payments.auth.negative-cache-ttl", "2s");
        }
    }

    @Inject
    Pool pool;

    @Inject
    MeterRegistry registry;

    @Inject
    MerchantAdminService admin;

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    @Test
    void badKeysAreLimitedPerAddressWhileGoodKeysKeepWorking() throws Exception {
        long start = System.nanoTime();
        UUID paymentA = Fixtures.insertPayment(pool, "UNKNOWN", 100, "tok_visa");
        assertThat(get(TestSupport.KEY_A, "/v1/payments/" + paymentA).statusCode())
                .isEqualTo(200);
        assertThat(get(TestSupport.KEY_B, "/v1/payments?orderId=none").statusCode())
                .isEqualTo(200);
        double lookupsBefore = unknownLookups();

        // The same bad key twice: one lookup, then the negative cache answers.
        String bad = "sk_live_" + UUID.randomUUID();
        assertThat(get(bad, "/v1/payments?orderId=none").statusCode()).isEqualTo(401);
        assertThat(get(bad, "/v1/payments?orderId=none").statusCode()).isEqualTo(401);
        assertThat(unknownLookups() - lookupsBefore).isEqualTo(1);

        // A key refused a moment ago, then issued in this instance, works at once.
        String issuedHere = "sk_test_flood_" + UUID.randomUUID();
        assertThat(get(issuedHere, "/v1/payments?orderId=none").statusCode()).isEqualTo(401);
        admin.ensureMerchant(UUID.randomUUID(), "issued here", 100, issuedHere)
                .await()
                .atMost(Duration.ofSeconds(30));
        assertThat(get(issuedHere, "/v1/payments?orderId=none").statusCode()).isEqualTo(200);

        // A key refused a moment ago, then stored by another instance (SQL here), works within the negative TTL.
        String issuedElsewhere = "sk_test_flood_" + UUID.randomUUID();
        assertThat(get(issuedElsewhere, "/v1/payments?orderId=none").statusCode())
                .isEqualTo(401);
        UUID merchant = UUID.randomUUID();
        pool.preparedQuery("INSERT INTO merchants (id, name, rate_limit_per_second) VALUES ($1, 'elsewhere', 100)")
                .execute(Tuple.of(merchant))
                .await()
                .indefinitely();
        pool.preparedQuery(
                        "INSERT INTO merchant_api_keys (merchant_id, key_hash, key_prefix) VALUES ($1, $2, 'sk_test')")
                .execute(Tuple.of(
                        merchant,
                        io.vertx.core.buffer.Buffer.buffer(
                                com.payments.api.merchants.MerchantAuthService.hash(issuedElsewhere))))
                .await()
                .indefinitely();
        Awaitility.await()
                .pollInterval(Duration.ofMillis(700))
                .atMost(Duration.ofSeconds(10))
                .until(() -> get(issuedElsewhere, "/v1/payments?orderId=none").statusCode() == 200);

        // The flood: 32 threads of random keys, released together, while 4 threads send good keys for at least 3 s.
        int badThreads = 32;
        int perThread = 40;
        List<HttpResponse<String>> badAnswers = Collections.synchronizedList(new ArrayList<>());
        List<Integer> goodStatuses = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean flooding = new AtomicBoolean(true);
        ExecutorService threads = Executors.newFixedThreadPool(badThreads + 4);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> bads = new ArrayList<>();
        List<Future<?>> goods = new ArrayList<>();
        try {
            for (int t = 0; t < badThreads; t++) {
                bads.add(threads.submit(() -> {
                    go.await();
                    for (int i = 0; i < perThread; i++) {
                        badAnswers.add(get("sk_live_" + UUID.randomUUID(), "/v1/payments/" + paymentA));
                    }
                    return null;
                }));
            }
            for (int t = 0; t < 4; t++) {
                String key = t % 2 == 0 ? TestSupport.KEY_A : TestSupport.KEY_B;
                String path = t % 2 == 0 ? "/v1/payments/" + paymentA : "/v1/payments?orderId=none";
                goods.add(threads.submit(() -> {
                    go.await();
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                    while (flooding.get() || System.nanoTime() < until) {
                        goodStatuses.add(get(key, path).statusCode());
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : bads) {
                f.get(5, TimeUnit.MINUTES);
            }
            flooding.set(false);
            for (Future<?> f : goods) {
                f.get(5, TimeUnit.MINUTES);
            }
        } finally {
            threads.shutdownNow();
        }
        double elapsedSeconds = (System.nanoTime() - start) / 1e9;
        // What the allowance can have given over the whole test: the burst plus the refill since the start.
        long allowed = MAX_FAILURES + (long) Math.ceil(elapsedSeconds * MAX_FAILURES / WINDOW.toSeconds());

        assertThat(goodStatuses).hasSizeGreaterThan(20).containsOnly(200);
        assertThat(badAnswers).hasSize(badThreads * perThread);
        long unauthorized =
                badAnswers.stream().filter(r -> r.statusCode() == 401).count();
        long limited = badAnswers.stream().filter(r -> r.statusCode() == 429).count();
        assertThat(unauthorized + limited).as("401 or 429 only").isEqualTo(badAnswers.size());
        assertThat(unauthorized).as("401s, of %s allowed failures", allowed).isBetween(1L, allowed);
        assertThat(limited).isGreaterThanOrEqualTo(badAnswers.size() - allowed);
        for (HttpResponse<String> r : badAnswers) {
            if (r.statusCode() == 429) {
                assertThat(r.headers().firstValue("Content-Type"))
                        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
                assertThat(r.body()).contains("\"code\":\"too_many_failed_authentications\"");
                assertThat(Integer.parseInt(
                                r.headers().firstValue("Retry-After").orElseThrow()))
                        .isBetween(1, (int) WINDOW.toSeconds());
            }
        }
        assertThat(unknownLookups() - lookupsBefore)
                .as("lookups of unknown keys in the database, of %s bad requests", badAnswers.size() + 6)
                .isLessThanOrEqualTo(allowed);

        // Afterwards: good keys still work, bad ones from this address are refused without a lookup.
        assertThat(get(TestSupport.KEY_A, "/v1/payments/" + paymentA).statusCode())
                .isEqualTo(200);
        assertThat(get("sk_live_" + UUID.randomUUID(), "/v1/payments/" + paymentA)
                        .statusCode())
                .isEqualTo(429);
    }

    private double unknownLookups() {
        return registry.counter("payments.auth.lookups", "result", "unknown").count();
    }

    private HttpResponse<String> get(String apiKey, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + io.restassured.RestAssured.port + path))
                .header("Authorization", "Bearer " + apiKey)
                .timeout(Duration.ofSeconds(60))
                .GET()
                .build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
