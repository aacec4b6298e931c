package com.payments.api;

import static com.payments.api.TestSupport.ADMIN;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.merchantPost;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.api.TestSupport.Shop;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Authentication, merchant isolation, reads, the operator API and the rate limit. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class MerchantTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Test
    void merchantBCannotSeeOrRefundMerchantAsPayment() {
        String orderId = unique("order");
        Response created = capture(KEY_A, unique("key"), body(orderId, 5000, "EUR", "tok_visa"));
        created.then().statusCode(201);
        String id = created.path("id");
        // a reserved refund of A's payment, as the refunds flow writes it
        UUID refundId = UUID.randomUUID();
        pool.withTransaction(conn -> conn.preparedQuery(
                                "UPDATE payments SET refunded_amount = refunded_amount + 1200 WHERE id = $1")
                        .execute(Tuple.of(UUID.fromString(id)))
                        .flatMap(r -> conn.preparedQuery(
                                        """
                                        INSERT INTO refunds (id, payment_id, merchant_id, amount, currency)
                                        SELECT $1, id, merchant_id, 1200, currency FROM payments WHERE id = $2""")
                                .execute(Tuple.of(refundId, UUID.fromString(id)))))
                .await()
                .indefinitely();

        Response own = merchant(KEY_A).get("/v1/payments/" + id);
        own.then().statusCode(200);
        assertThat(own.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(own.<Integer>path("refundedAmount")).isEqualTo(1200);
        assertThat(own.<Integer>path("refundableAmount")).isEqualTo(3800);
        assertThat(own.<List<Object>>path("refunds")).hasSize(1);
        assertThat(own.<String>path("refunds[0].id")).isEqualTo(refundId.toString());
        merchant(KEY_A).get("/v1/refunds/" + refundId).then().statusCode(200);
        assertThat(merchant(KEY_A).get("/v1/payments?orderId=" + orderId).<List<Object>>path("data"))
                .hasSize(1);

        Response missing = merchant(KEY_B).get("/v1/payments/" + UUID.randomUUID());
        Response foreign = merchant(KEY_B).get("/v1/payments/" + id);
        foreign.then().statusCode(404).contentType("application/problem+json");
        // The same answer but for `instance`, this request's own id.
        assertThat(withoutInstance(foreign.asString()))
                .isEqualTo(withoutInstance(missing.asString()))
                .doesNotContain(orderId);
        merchant(KEY_B).get("/v1/refunds/" + refundId).then().statusCode(404);
        assertThat(merchant(KEY_B).get("/v1/payments?orderId=" + orderId).<List<Object>>path("data"))
                .isEmpty();
        // refunds are created by a later issue's endpoint; whatever answers there, B gets a 404 and nothing changes
        merchant(KEY_B)
                .header("Idempotency-Key", unique("key"))
                .contentType("application/json")
                .body("{\"amount\":100}")
                .post("/v1/payments/" + id + "/refunds")
                .then()
                .statusCode(404);
        assertThat(count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", UUID.fromString(id)))
                .isEqualTo(1200);
        merchant(KEY_A).get("/v1/payments/not-a-uuid").then().statusCode(404);
    }

    @Test
    void keysArePerMerchant() {
        String key = unique("shared-key");
        Response a = capture(KEY_A, key, body(unique("order"), 100, "EUR", "tok_visa"));
        Response b = capture(KEY_B, key, body(unique("order"), 200, "EUR", "tok_visa"));
        a.then().statusCode(201);
        b.then().statusCode(201).header("Idempotent-Replayed", (String) null);
        assertThat(b.<String>path("id")).isNotEqualTo(a.<String>path("id"));
    }

    @Test
    void operatorsCreateMerchantsAndRotateKeys() {
        given().contentType("application/json")
                .body("{\"name\":\"Shop\"}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(401);
        given().header("Authorization", "Bearer wrong")
                .contentType("application/json")
                .body("{\"name\":\"Shop\"}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(401);

        Response created = given().header("Authorization", "Bearer " + ADMIN)
                .contentType("application/json")
                .body("{\"name\":\"Shop\",\"rateLimitPerSecond\":1000}")
                .post("/v1/admin/merchants");
        created.then().statusCode(201);
        String merchantId = created.path("merchantId");
        String firstKey = created.path("apiKey");
        assertThat(firstKey).startsWith("sk_live_");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM merchant_api_keys WHERE key_prefix = $1",
                        firstKey.substring(0, 12)))
                .isEqualTo(1);
        capture(firstKey, unique("key"), body(unique("order"), 100, "EUR", "tok_visa"))
                .then()
                .statusCode(201);

        Response rotated = given().header("Authorization", "Bearer " + ADMIN)
                .post("/v1/admin/merchants/" + merchantId + "/keys?revokeOthers=true");
        rotated.then().statusCode(201);
        assertThat(rotated.<Integer>path("revokedKeys")).isEqualTo(1);
        String secondKey = rotated.path("apiKey");
        merchant(secondKey).get("/v1/payments?orderId=x").then().statusCode(200);
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> merchant(firstKey).get("/v1/payments?orderId=x").statusCode() == 401);

        given().header("Authorization", "Bearer " + ADMIN)
                .post("/v1/admin/merchants/" + UUID.randomUUID() + "/keys")
                .then()
                .statusCode(404);
    }

    @Test
    void aNullRateLimitIsTheDefaultRate() {
        for (String body : List.of("{\"name\":\"Null rate\",\"rateLimitPerSecond\":null}", "{\"name\":\"No rate\"}")) {
            Response created = given().header("Authorization", "Bearer " + ADMIN)
                    .contentType("application/json")
                    .body(body)
                    .post("/v1/admin/merchants");
            created.then().statusCode(201);
            assertThat(count(
                            pool,
                            "SELECT rate_limit_per_second FROM merchants WHERE id = $1",
                            UUID.fromString(created.path("merchantId"))))
                    .as(body)
                    .isEqualTo(100);
        }
    }

    @Test
    void overItsRateAMerchantGets429WithRetryAfterAndNothingStored() throws Exception {
        String apiKey = given().header("Authorization", "Bearer " + ADMIN)
                .contentType("application/json")
                .body("{\"name\":\"Slow shop\",\"rateLimitPerSecond\":1}")
                .post("/v1/admin/merchants")
                .then()
                .statusCode(201)
                .extract()
                .path("apiKey");
        HttpClient client = HttpClient.newHttpClient();
        List<String> keys = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String key = unique("key");
            keys.add(key);
            calls.add(client.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/v1/payments"))
                            .header("Authorization", "Bearer " + apiKey)
                            .header("Idempotency-Key", key)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body(unique("order"), 100, "EUR", "tok_visa")))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        int limited = 0;
        for (int i = 0; i < calls.size(); i++) {
            HttpResponse<String> r = calls.get(i).get();
            assertThat(r.statusCode()).isIn(201, 429);
            if (r.statusCode() == 429) {
                limited++;
                assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(r.headers().firstValue("Content-Type"))
                        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
                assertThat(r.body()).contains("\"code\":\"rate_limited\"");
                assertThat(count(pool, "SELECT count(*) FROM idempotency_keys WHERE key = $1", keys.get(i)))
                        .isZero();
            }
        }
        assertThat(limited).isGreaterThanOrEqualTo(1);
    }

    @Test
    void problemsAndRowCountsForUnauthenticatedReads() {
        Map<String, Long> before = TestSupport.rowCounts(pool);
        given().get("/v1/payments/" + UUID.randomUUID())
                .then()
                .statusCode(401)
                .contentType("application/problem+json")
                .header("WWW-Authenticate", "Bearer");
        // a refused read changes nothing either (orderId is optional since API 1.3.0: a bad limit is refused instead)
        merchant(KEY_A).get("/v1/payments?limit=0").then().statusCode(400);
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
    }

    private static String withoutInstance(String problem) {
        JsonObject json = new JsonObject(problem);
        assertThat(json.getString("instance")).startsWith("req_");
        json.remove("instance");
        return json.encode();
    }

    // ---- cursor pagination of GET /v1/payments and GET /v1/refunds (docs/api.md "Lists"). Each test works on a
    // merchant of its own, so the lists hold only what it wrote.

    /**
     * 40 payments exist (captured at once, so many share a created_at and only the id orders them); then four
     * threads capture without pause while the list is read 6 at a time, and before each next page at least one more
     * capture has landed. Every payment that existed before is seen exactly once, no payment twice, in (created_at,
     * id) order; then {@code ending_before} pages back from the oldest to the newest and finds every payment but it.
     */
    @Test
    void pagingWhileCapturesRunConcurrentlyMissesAndRepeatsNothing() throws Exception {
        Shop shop = newShop();
        String key = shop.key();
        List<HttpResponse<String>> created = TestSupport.concurrently(IntStream.range(0, 40)
                .mapToObj(i -> merchantPost("/v1/payments", key, unique("k"), captureJson(unique("order"))))
                .toList());
        assertThat(created).allMatch(r -> r.statusCode() == 201);
        Set<String> before = new HashSet<>(ids(shop));
        assertThat(before).hasSize(40);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger capturedMeanwhile = new AtomicInteger();
        ExecutorService writers = Executors.newFixedThreadPool(4);
        HttpClient client = HttpClient.newHttpClient();
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            running.add(writers.submit(() -> {
                for (int i = 0; i < 150 && !stop.get(); i++) {
                    HttpResponse<String> r = client.send(
                            merchantPost("/v1/payments", key, unique("k"), captureJson(unique("order"))),
                            HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 201) {
                        capturedMeanwhile.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        List<String> seen = new ArrayList<>();
        try {
            String after = null;
            boolean more = true;
            while (more) {
                int landed = capturedMeanwhile.get();
                await().atMost(Duration.ofSeconds(30)).until(() -> capturedMeanwhile.get() > landed);
                Response page =
                        list(key, "/v1/payments", 6, after == null ? Map.of() : Map.of("starting_after", after));
                page.then().statusCode(200);
                List<String> data = page.path("data.id");
                assertThat(data.size()).isBetween(1, 6);
                seen.addAll(data);
                after = data.get(data.size() - 1);
                more = page.path("has_more");
            }
        } finally {
            stop.set(true);
            for (Future<?> f : running) {
                f.get(60, TimeUnit.SECONDS);
            }
            writers.shutdownNow();
        }
        assertThat(capturedMeanwhile.get()).as("captures while paging").isGreaterThan(seen.size() / 6);
        assertThat(seen).doesNotHaveDuplicates().containsAll(before);
        assertThat(seen).isEqualTo(inListOrder(seen));

        // back from the oldest: every payment of the merchant but the oldest, newest first within each page
        String oldest = seen.get(seen.size() - 1);
        List<String> all = ids(shop);
        assertThat(all.get(all.size() - 1)).isEqualTo(oldest);
        List<List<String>> pagesBack = new ArrayList<>();
        String before_ = oldest;
        boolean more = true;
        while (more) {
            Response page = list(key, "/v1/payments", 7, Map.of("ending_before", before_));
            page.then().statusCode(200);
            List<String> data = page.path("data.id");
            pagesBack.add(0, data);
            before_ = data.get(0);
            more = page.path("has_more");
        }
        List<String> back = pagesBack.stream().flatMap(List::stream).toList();
        assertThat(back).isEqualTo(all.subList(0, all.size() - 1));
    }

    @Test
    void listsFilterByOrderAndPaymentAndPageBothWays() {
        String key = newShop().key();
        String order = unique("order");
        List<String> ofOrder = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ofOrder.add(0, captured(key, order));
            captured(key, unique("other"));
        }
        List<String> forward = pageThrough(key, "/v1/payments", Map.of("orderId", order), 2);
        assertThat(forward).isEqualTo(ofOrder);
        Response page = list(key, "/v1/payments", 2, Map.of("orderId", order, "ending_before", ofOrder.get(4)));
        assertThat(page.<List<String>>path("data.id")).isEqualTo(ofOrder.subList(2, 4));
        assertThat(page.<Boolean>path("has_more")).isTrue();
        Response all = merchant(key).get("/v1/payments");
        assertThat(all.<List<String>>path("data.id")).hasSize(10);
        assertThat(all.<Boolean>path("has_more")).isFalse();
        assertThat(all.<Map<String, String>>path("data[0].metadata")).isEqualTo(Map.of("n", "1"));
        assertThat(merchant(KEY_A)
                        .queryParam("orderId", order)
                        .get("/v1/payments")
                        .<List<String>>path("data"))
                .isEmpty();

        String paymentId = ofOrder.get(0);
        String other = ofOrder.get(1);
        List<String> refundsOfPayment = new ArrayList<>();
        List<String> allRefunds = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String r = refunded(key, paymentId);
            refundsOfPayment.add(0, r);
            allRefunds.add(0, r);
            allRefunds.add(0, refunded(key, other));
        }
        assertThat(pageThrough(key, "/v1/refunds", Map.of(), 3)).isEqualTo(allRefunds);
        assertThat(pageThrough(key, "/v1/refunds", Map.of("paymentId", paymentId), 3))
                .isEqualTo(refundsOfPayment);
        Response refunds = list(key, "/v1/refunds", 3, Map.of("ending_before", allRefunds.get(7)));
        assertThat(refunds.<List<String>>path("data.id")).isEqualTo(allRefunds.subList(4, 7));
        assertThat(refunds.<String>path("data[0].paymentId")).isIn(paymentId, other);
        assertThat(refunds.<Map<String, String>>path("data[0].metadata")).isEqualTo(Map.of("r", "1"));
        assertThat(merchant(KEY_A).get("/v1/refunds?paymentId=" + paymentId).<List<String>>path("data"))
                .isEmpty();
    }

    /** Bad paging parameters get a 400 problem with their own code; another merchant's id is no cursor. */
    @Test
    void invalidLimitsAndCursorsAreRefused() {
        String key = newShop().key();
        String mine = captured(key, unique("order"));
        String myRefund = refunded(key, mine);
        String theirs =
                capture(KEY_A, unique("k"), captureJson(unique("order"))).path("id");
        Map<String, String> cases = new LinkedHashMap<>();
        for (String limit : List.of("0", "101", "-1", "1.5", "abc", "", "1000000000000")) {
            cases.put("/v1/payments?limit=" + limit, "invalid_limit");
            cases.put("/v1/refunds?limit=" + limit, "invalid_limit");
        }
        for (String list : List.of("/v1/payments", "/v1/refunds")) {
            cases.put(list + "?starting_after=nope", "invalid_cursor");
            cases.put(list + "?ending_before=" + UUID.randomUUID(), "invalid_cursor");
            cases.put(list + "?starting_after=" + theirs, "invalid_cursor");
            cases.put(list + "?starting_after=" + mine + "&ending_before=" + mine, "invalid_cursor");
        }
        cases.put("/v1/payments?starting_after=" + myRefund, "invalid_cursor");
        cases.put("/v1/refunds?ending_before=" + mine, "invalid_cursor");
        cases.put("/v1/refunds?paymentId=nope", "invalid_payment_id");
        cases.put("/v1/payments?orderId=", "invalid_order_id");
        cases.forEach((path, code) -> {
            Response r = merchant(key).urlEncodingEnabled(false).get(path);
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(r.contentType()).as(path).startsWith("application/problem+json");
            assertThat(r.<String>path("code")).as(path).isEqualTo(code);
        });
        assertThat(list(key, "/v1/payments", 1, Map.of("starting_after", mine)).<List<String>>path("data"))
                .isEmpty();
    }

    /** A merchant of its own for one test: its API key and id. */
    private static Shop newShop() {
        return TestSupport.newShop("pages");
    }

    private static String captureJson(String orderId) {
        return "{\"orderId\":\"" + orderId
                + "\",\"amount\":1000,\"currency\":\"EUR\",\"source\":\"tok_visa\",\"metadata\":{\"n\":\"1\"}}";
    }

    private static String captured(String key, String orderId) {
        Response r = capture(key, unique("k"), captureJson(orderId));
        r.then().statusCode(201);
        return r.path("id");
    }

    private static String refunded(String key, String paymentId) {
        Response r = merchant(key)
                .header("Idempotency-Key", unique("rk"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":10,\"metadata\":{\"r\":\"1\"}}")
                .post("/v1/payments/" + paymentId + "/refunds");
        r.then().statusCode(202);
        return r.path("refundId");
    }

    private static Response list(String key, String path, int limit, Map<String, String> params) {
        return merchant(key).queryParam("limit", limit).queryParams(params).get(path);
    }

    /** Every item of a list, page by page with {@code starting_after}. */
    private static List<String> pageThrough(String key, String path, Map<String, String> filter, int limit) {
        List<String> seen = new ArrayList<>();
        String after = null;
        boolean more = true;
        while (more) {
            Map<String, String> params = new LinkedHashMap<>(filter);
            if (after != null) {
                params.put("starting_after", after);
            }
            Response page = list(key, path, limit, params);
            page.then().statusCode(200);
            List<String> data = page.path("data.id");
            assertThat(data).hasSizeLessThanOrEqualTo(limit);
            seen.addAll(data);
            more = page.path("has_more");
            after = more ? data.get(data.size() - 1) : null;
        }
        return seen;
    }

    /** The merchant's payments as the database orders them: newest first by (created_at, id). */
    private List<String> ids(Shop shop) {
        List<String> ids = new ArrayList<>();
        for (Row row : pool.preparedQuery(
                        """
                        SELECT id FROM payments WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC""")
                .execute(Tuple.of(shop.id()))
                .await()
                .indefinitely()) {
            ids.add(row.getUUID(0).toString());
        }
        return ids;
    }

    /** {@code ids} sorted as the database orders payments: newest first by (created_at, id). */
    private List<String> inListOrder(List<String> ids) {
        List<String> sorted = new ArrayList<>();
        for (Row row : pool.preparedQuery(
                        "SELECT id FROM payments WHERE id = ANY ($1::uuid[]) ORDER BY created_at DESC, id DESC")
                .execute(Tuple.of(ids.stream().map(UUID::fromString).toArray(UUID[]::new)))
                .await()
                .indefinitely()) {
            sorted.add(row.getUUID(0).toString());
        }
        return sorted;
    }
}
