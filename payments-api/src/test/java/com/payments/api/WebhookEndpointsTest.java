package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.TestSupport.Shop;
import com.payments.contracts.webhooks.HostResolver;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusMock;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code /v1/webhook_endpoints} and {@code POST /v1/events/{id}/redeliver} (docs/api.md "Webhook endpoints"), against
 * the tables: the delivery service is not running, so what is asserted is what it would read. The URLs are loopback or
 * literal addresses, never contacted; a host name is answered by a resolver of the test (QuarkusMock), not DNS.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class WebhookEndpointsTest {
    private static final String SECRET = "whsec_[A-Za-z0-9+/]{43}=";
    private static final String RECEIVER = "http://127.0.0.1:21001/hook";

    @Inject
    Pool pool;

    @Test
    void anEndpointIsCreatedWithItsSecretOnceListedReadAndDeleted() {
        Shop shop = newShop();
        Response created = create(shop.key(), RECEIVER, "PaymentCaptured", "RefundFailed");
        created.then().statusCode(201).header("Cache-Control", "no-store");
        String id = created.path("id");
        String secret = created.path("secret");
        assertThat(secret).matches(SECRET);
        assertThat(created.<String>path("url")).isEqualTo(RECEIVER);
        assertThat(created.<List<String>>path("events")).containsExactly("PaymentCaptured", "RefundFailed");
        assertThat(created.<String>path("status")).isEqualTo("ENABLED");
        assertThat(created.<String>path("createdAt")).isNotBlank();
        assertThat(secrets(id)).containsExactly(secret);
        assertThat(count(pool, "SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1", shop.id()))
                .isEqualTo(1);

        Response one = merchant(shop.key()).get("/v1/webhook_endpoints/" + id);
        one.then().statusCode(200);
        assertThat(one.<String>path("secret")).isNull();
        assertThat(one.<Map<String, Object>>path("")).doesNotContainKey("secret");
        Response list = merchant(shop.key()).get("/v1/webhook_endpoints");
        assertThat(list.<List<String>>path("data.id")).containsExactly(id);
        assertThat(list.asString()).doesNotContain(secret.substring(6));

        UUID pending = delivery(id, shop.id(), "event", "PENDING");
        UUID done = delivery(id, shop.id(), "redeliver", "SUCCEEDED");
        Response deleted = merchant(shop.key()).delete("/v1/webhook_endpoints/" + id);
        deleted.then().statusCode(200);
        assertThat(deleted.<String>path("status")).isEqualTo("DELETED");
        assertThat(deliveryStatus(pending)).isEqualTo("FAILED");
        assertThat(deliveryStatus(done)).isEqualTo("SUCCEEDED");
        assertThat(secrets(id)).isEmpty();
        assertThat(merchant(shop.key()).get("/v1/webhook_endpoints").<List<String>>path("data"))
                .isEmpty();
        assertThat(merchant(shop.key()).get("/v1/webhook_endpoints/" + id).<String>path("status"))
                .isEqualTo("DELETED");
        merchant(shop.key()).delete("/v1/webhook_endpoints/" + id).then().statusCode(200);
        assertThat(merchant(shop.key())
                        .post("/v1/webhook_endpoints/" + id + "/rotate_secret")
                        .<String>path("code"))
                .isEqualTo("endpoint_deleted");
        assertThat(merchant(shop.key())
                        .post("/v1/webhook_endpoints/" + id + "/enable")
                        .<String>path("code"))
                .isEqualTo("endpoint_deleted");
        given().get("/v1/webhook_endpoints").then().statusCode(401);
    }

    @Test
    void everyRefusalIsAProblemAndStoresNothing() throws Exception {
        Shop shop = newShop();
        Map<String, String> bodies = new LinkedHashMap<>();
        bodies.put("{\"events\":[\"*\"]}", "invalid_url");
        bodies.put(body("ftp://127.0.0.1/hook", "*"), "invalid_url");
        bodies.put(body("https://user:pw@127.0.0.1/hook", "*"), "invalid_url");
        bodies.put(body("https://127.0.0.1/hook#x", "*"), "invalid_url");
        bodies.put(body("https:///hook", "*"), "invalid_url");
        bodies.put(body("https://127.0.0.1/" + "a".repeat(2048), "*"), "invalid_url");
        bodies.put("{\"url\":\"" + RECEIVER + "\"}", "invalid_events");
        bodies.put("{\"url\":\"" + RECEIVER + "\",\"events\":[]}", "invalid_events");
        bodies.put("{\"url\":\"" + RECEIVER + "\",\"events\":\"*\"}", "invalid_events");
        bodies.put("{\"url\":\"" + RECEIVER + "\",\"events\":[1]}", "invalid_events");
        bodies.put(body(RECEIVER, "payment.succeeded"), "invalid_events");
        bodies.put(body(RECEIVER, "PaymentCaptured", "PaymentCaptured"), "invalid_events");
        bodies.put("{\"url\":\"" + RECEIVER + "\",\"events\":[\"*\"],\"secret\":\"x\"}", "unknown_field");
        bodies.put("[]", "invalid_json");
        bodies.put(body("https://10.0.0.1/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://169.254.169.254/latest/meta-data", "*"), "webhook_url_forbidden");
        bodies.put(body("https://[::ffff:10.0.0.1]/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://[fd12:3456::1]/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://[::ffff:169.254.169.254]/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://100.100.100.200/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://internal.example.test/hook", "*"), "webhook_url_forbidden");
        bodies.put(body("https://nowhere.example.test/hook", "*"), "webhook_url_unresolvable");
        QuarkusMock.installMockForType(
                new HostResolver(null) {
                    @Override
                    public Uni<List<InetAddress>> resolve(String host) {
                        try {
                            return switch (host) {
                                case "internal.example.test" ->
                                    Uni.createFrom()
                                            .item(List.of(
                                                    InetAddress.getByName("93.184.215.14"),
                                                    InetAddress.getByName("192.168.7.7")));
                                case "nowhere.example.test" ->
                                    Uni.createFrom().failure(new java.net.UnknownHostException(host));
                                // literals only: no name leaves the machine
                                default -> Uni.createFrom().item(List.of(InetAddress.getByName(literal(host))));
                            };
                        } catch (java.net.UnknownHostException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                },
                HostResolver.class);

        bodies.forEach((json, code) -> {
            Response r = merchant(shop.key())
                    .contentType(ContentType.JSON)
                    .body(json)
                    .post("/v1/webhook_endpoints");
            assertThat(r.statusCode()).as(json).isEqualTo(400);
            assertThat(r.contentType()).as(json).startsWith("application/problem+json");
            assertThat(r.<String>path("code")).as(json).isEqualTo(code);
        });
        assertThat(count(pool, "SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1", shop.id()))
                .isZero();
        assertThat(count(
                        pool,
                        """
                        SELECT count(*) FROM webhook_endpoint_secrets s JOIN webhook_endpoints e ON e.id = s.endpoint_id
                         WHERE e.merchant_id = $1""",
                        shop.id()))
                .isZero();
        // the same mock lets a public address through: the refusals above are the check's, not the mock's
        create(shop.key(), "https://93.184.215.14/hook", "*").then().statusCode(201);
    }

    @Test
    void concurrentRegistrationsNeverPassTheLimit() throws Exception {
        Shop shop = newShop();
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            requests.add(post("/v1/webhook_endpoints", shop.key(), body(RECEIVER + i, "*")));
        }
        List<HttpResponse<String>> answers = TestSupport.concurrently(requests);
        assertThat(answers.stream().filter(a -> a.statusCode() == 201)).hasSize(16);
        assertThat(answers.stream()
                        .filter(a -> a.statusCode() == 400 && a.body().contains("too_many_endpoints")))
                .hasSize(8);
        assertThat(count(pool, "SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1", shop.id()))
                .isEqualTo(16);

        String anyId = merchant(shop.key())
                .queryParam("limit", 1)
                .get("/v1/webhook_endpoints")
                .path("data[0].id");
        merchant(shop.key()).delete("/v1/webhook_endpoints/" + anyId).then().statusCode(200);
        create(shop.key(), RECEIVER, "*").then().statusCode(201);
        create(shop.key(), RECEIVER, "*").then().statusCode(400);
    }

    @Test
    void aRotatedSecretSignsForTheGracePeriodAndConcurrentRotationsLeaveOneCurrent() throws Exception {
        Shop shop = newShop();
        Response created = create(shop.key(), RECEIVER, "*");
        String id = created.path("id");
        String first = created.path("secret");

        Response rotated = merchant(shop.key()).post("/v1/webhook_endpoints/" + id + "/rotate_secret");
        rotated.then().statusCode(200).header("Cache-Control", "no-store");
        String second = rotated.path("secret");
        assertThat(second).matches(SECRET).isNotEqualTo(first);
        assertThat(rotated.<String>path("id")).isEqualTo(id);
        Row old = secretRow(id, first);
        OffsetDateTime now = OffsetDateTime.now();
        // payments.webhooks.secret-grace: 24h
        assertThat(old.getOffsetDateTime("expires_at"))
                .isBetween(now.plusHours(24).minusMinutes(1), now.plusHours(24).plusMinutes(1));
        assertThat(secretRow(id, second).getOffsetDateTime("expires_at")).isNull();

        List<HttpRequest> rotations = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            rotations.add(post("/v1/webhook_endpoints/" + id + "/rotate_secret", shop.key(), ""));
        }
        List<HttpResponse<String>> answers = TestSupport.concurrently(rotations);
        assertThat(answers).allSatisfy(a -> assertThat(a.statusCode()).isEqualTo(200));
        Set<String> returned = new HashSet<>();
        answers.forEach(a -> returned.add(a.body().replaceAll(".*\"secret\":\"([^\"]+)\".*", "$1")));
        assertThat(returned).hasSize(8);
        List<String> current = currentSecrets(id);
        assertThat(current).hasSize(1);
        assertThat(returned).contains(current.get(0));
        // every secret ever returned still signs (the first two and seven of the eight until the grace ends)
        assertThat(secrets(id)).hasSize(10).contains(first, second).containsAll(returned);
        assertThat(merchant(shop.key()).get("/v1/webhook_endpoints/" + id).asString())
                .doesNotContain("secret");
    }

    @Test
    void anotherMerchantsEndpointsAndEventsAreNotFound() {
        Shop mine = newShop();
        String id = create(mine.key(), RECEIVER, "*").path("id");
        UUID event = event(mine.id(), "PaymentCaptured");
        String other = newShop().key();
        for (String path : List.of("/v1/webhook_endpoints/" + id, "/v1/webhook_endpoints/" + id + "/deliveries")) {
            merchant(other).get(path).then().statusCode(404).contentType("application/problem+json");
        }
        merchant(other).delete("/v1/webhook_endpoints/" + id).then().statusCode(404);
        merchant(other)
                .post("/v1/webhook_endpoints/" + id + "/rotate_secret")
                .then()
                .statusCode(404);
        merchant(other).post("/v1/webhook_endpoints/" + id + "/enable").then().statusCode(404);
        merchant(other).post("/v1/events/" + event + "/redeliver").then().statusCode(404);
        assertThat(merchant(other).get("/v1/webhook_endpoints").<List<String>>path("data.id"))
                .doesNotContain(id);
        assertThat(merchant(KEY_A).get("/v1/webhook_endpoints").<List<String>>path("data.id"))
                .doesNotContain(id);
        merchant(mine.key()).get("/v1/webhook_endpoints/nope").then().statusCode(404);
        assertThat(merchant(mine.key()).get("/v1/webhook_endpoints/" + id).<String>path("status"))
                .isEqualTo("ENABLED");
        assertThat(secrets(id)).hasSize(1);
        assertThat(count(pool, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1", event))
                .isZero();
    }

    @Test
    void theListPagesNewestFirstWithoutRepeatsOrGaps() {
        Shop shop = newShop();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(0, create(shop.key(), RECEIVER + i, "*").path("id"));
        }
        List<String> seen = new ArrayList<>();
        String after = null;
        boolean more = true;
        while (more) {
            var request = merchant(shop.key()).queryParam("limit", 2);
            if (after != null) {
                request.queryParam("starting_after", after);
            }
            Response page = request.get("/v1/webhook_endpoints");
            page.then().statusCode(200);
            List<String> data = page.path("data.id");
            seen.addAll(data);
            more = page.path("has_more");
            after = data.get(data.size() - 1);
        }
        assertThat(seen).isEqualTo(ids);
        Response before = merchant(shop.key())
                .queryParam("limit", 2)
                .queryParam("ending_before", ids.get(3))
                .get("/v1/webhook_endpoints");
        assertThat(before.<List<String>>path("data.id")).isEqualTo(ids.subList(1, 3));
        merchant(shop.key())
                .queryParam("limit", 101)
                .get("/v1/webhook_endpoints")
                .then()
                .statusCode(400);
        merchant(shop.key())
                .delete("/v1/webhook_endpoints/" + ids.get(2))
                .then()
                .statusCode(200);
        assertThat(merchant(shop.key())
                        .queryParam("starting_after", ids.get(2))
                        .get("/v1/webhook_endpoints")
                        .<String>path("code"))
                .isEqualTo("invalid_cursor");
    }

    @Test
    void redeliverQueuesOneDeliveryPerMatchingEnabledEndpointAndTheDeliveriesListShowsThem() {
        Shop shop = newShop();
        String captured = create(shop.key(), RECEIVER, "PaymentCaptured").path("id");
        String all = create(shop.key(), RECEIVER, "*").path("id");
        String failedOnly = create(shop.key(), RECEIVER, "PaymentFailed").path("id");
        String disabled = create(shop.key(), RECEIVER, "*").path("id");
        String deleted = create(shop.key(), RECEIVER, "*").path("id");
        pool.preparedQuery(
                        "UPDATE webhook_endpoints SET status = 'DISABLED', disabled_reason = 'failing since 3 days' WHERE id = $1")
                .execute(Tuple.of(UUID.fromString(disabled)))
                .await()
                .atMost(Duration.ofSeconds(10));
        merchant(shop.key()).delete("/v1/webhook_endpoints/" + deleted).then().statusCode(200);
        assertThat(merchant(shop.key()).get("/v1/webhook_endpoints/" + disabled).<String>path("disabledReason"))
                .isEqualTo("failing since 3 days");
        UUID event = event(shop.id(), "PaymentCaptured");

        Response accepted = merchant(shop.key()).post("/v1/events/" + event + "/redeliver");
        accepted.then().statusCode(202);
        assertThat(accepted.<String>path("eventId")).isEqualTo(event.toString());
        assertThat(accepted.<List<String>>path("deliveries.endpointId")).containsExactlyInAnyOrder(captured, all);
        assertThat(count(
                        pool,
                        """
                        SELECT count(*) FROM webhook_deliveries
                         WHERE event_id = $1 AND merchant_id = $2 AND origin = 'redeliver' AND status = 'PENDING'
                           AND attempts = 0 AND next_attempt_at <= now()""",
                        event,
                        shop.id()))
                .isEqualTo(2);

        Response one = merchant(shop.key())
                .contentType(ContentType.JSON)
                .body("{\"endpointId\":\"" + all + "\"}")
                .post("/v1/events/" + event + "/redeliver");
        one.then().statusCode(202);
        assertThat(one.<List<String>>path("deliveries.endpointId")).containsExactly(all);
        for (String notMatching :
                List.of(failedOnly, disabled, deleted, UUID.randomUUID().toString())) {
            Response none = merchant(shop.key())
                    .contentType(ContentType.JSON)
                    .body("{\"endpointId\":\"" + notMatching + "\"}")
                    .post("/v1/events/" + event + "/redeliver");
            assertThat(none.statusCode()).isEqualTo(409);
            assertThat(none.<String>path("code")).isEqualTo("no_matching_endpoint");
        }
        assertThat(merchant(shop.key())
                        .contentType(ContentType.JSON)
                        .body("{\"endpointId\":\"nope\"}")
                        .post("/v1/events/" + event + "/redeliver")
                        .<String>path("code"))
                .isEqualTo("invalid_endpoint_id");
        merchant(shop.key())
                .post("/v1/events/" + UUID.randomUUID() + "/redeliver")
                .then()
                .statusCode(404);
        assertThat(count(pool, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1", event))
                .isEqualTo(3);

        // the delivery service's first attempt of the newest delivery, as it records it
        UUID newest = UUID.fromString(one.path("deliveries[0].id"));
        pool.preparedQuery(
                        """
                        WITH attempt AS (
                            INSERT INTO webhook_delivery_attempts
                                (delivery_id, attempt, started_at, latency_ms, response_code, outcome, error, next_attempt_at)
                            VALUES ($1, 1, now(), 250, 503, 'FAILED', 'HTTP 503', now() + interval '5 minutes'))
                        UPDATE webhook_deliveries SET attempts = 1, next_attempt_at = now() + interval '5 minutes'
                         WHERE id = $1""")
                .execute(Tuple.of(newest))
                .await()
                .atMost(Duration.ofSeconds(10));
        Response deliveries = merchant(shop.key()).get("/v1/webhook_endpoints/" + all + "/deliveries");
        deliveries.then().statusCode(200);
        assertThat(deliveries.<List<String>>path("data.eventId")).containsOnly(event.toString());
        assertThat(deliveries.<List<String>>path("data.id")).hasSize(2).first().isEqualTo(newest.toString());
        assertThat(deliveries.<List<String>>path("data.eventType")).containsOnly("PaymentCaptured");
        assertThat(deliveries.<List<String>>path("data.origin")).containsOnly("redeliver");
        assertThat(deliveries.<Integer>path("data[0].attempts")).isEqualTo(1);
        assertThat(deliveries.<Integer>path("data[0].lastAttempt.responseCode")).isEqualTo(503);
        assertThat(deliveries.<Integer>path("data[0].lastAttempt.latencyMs")).isEqualTo(250);
        assertThat(deliveries.<String>path("data[0].lastAttempt.error")).isEqualTo("HTTP 503");
        assertThat(deliveries.<String>path("data[0].nextAttemptAt")).isNotBlank();
        assertThat(deliveries.<Object>path("data[1].lastAttempt")).isNull();
        Response paged =
                merchant(shop.key()).queryParam("limit", 1).get("/v1/webhook_endpoints/" + all + "/deliveries");
        assertThat(paged.<List<String>>path("data.id")).containsExactly(newest.toString());
        assertThat(paged.<Boolean>path("has_more")).isTrue();

        // enabled again, the endpoint the delivery service disabled receives redeliveries too
        Response enabled = merchant(shop.key()).post("/v1/webhook_endpoints/" + disabled + "/enable");
        enabled.then().statusCode(200);
        assertThat(enabled.<String>path("status")).isEqualTo("ENABLED");
        assertThat(merchant(shop.key())
                        .post("/v1/events/" + event + "/redeliver")
                        .<List<String>>path("deliveries.endpointId"))
                .containsExactlyInAnyOrder(captured, all, disabled);
    }

    private Response create(String key, String url, String... events) {
        return merchant(key)
                .contentType(ContentType.JSON)
                .body(body(url, events))
                .post("/v1/webhook_endpoints");
    }

    private static String body(String url, String... events) {
        return "{\"url\":\"" + url + "\",\"events\":[\"" + String.join("\",\"", events) + "\"]}";
    }

    private static HttpRequest post(String path, String key, String json) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + io.restassured.RestAssured.port + path))
                .header("Authorization", "Bearer " + key)
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
    }

    /** An IP literal as the URL writes it, brackets removed. */
    private static String literal(String host) {
        if (!host.matches("[0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {
            throw new IllegalArgumentException("the test resolves literals only: " + host);
        }
        return host;
    }

    /** An event of the merchant's feed, as the outbox trigger writes it. */
    private UUID event(UUID merchantId, String type) {
        UUID id = UUID.randomUUID();
        pool.preparedQuery(
                        "INSERT INTO merchant_events (id, merchant_id, type, payload, created_at, payment_id, version)"
                                + " VALUES ($1, $2, $3, '{}', now(), gen_random_uuid(), 1)")
                .execute(Tuple.of(id, merchantId, type))
                .await()
                .atMost(Duration.ofSeconds(10));
        return id;
    }

    private UUID delivery(String endpointId, UUID merchantId, String origin, String status) {
        UUID id = UUID.randomUUID();
        pool.preparedQuery(
                        """
                        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, merchant_id, origin, status, next_attempt_at)
                        VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 = 'PENDING' THEN now() END)""")
                .execute(Tuple.from(
                        List.of(id, UUID.fromString(endpointId), UUID.randomUUID(), merchantId, origin, status)))
                .await()
                .atMost(Duration.ofSeconds(10));
        return id;
    }

    private String deliveryStatus(UUID id) {
        return pool.preparedQuery("SELECT status FROM webhook_deliveries WHERE id = $1")
                .execute(Tuple.of(id))
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next()
                .getString(0);
    }

    /** The endpoint's secrets, opened as webhook-delivery opens them to sign (the test profile's keys). */
    private List<String> secrets(String endpointId) {
        return secretRows(endpointId, "").stream().map(this::open).toList();
    }

    private List<String> currentSecrets(String endpointId) {
        return secretRows(endpointId, " AND expires_at IS NULL").stream()
                .map(this::open)
                .toList();
    }

    private Row secretRow(String endpointId, String secret) {
        return secretRows(endpointId, "").stream()
                .filter(row -> open(row).equals(secret))
                .findFirst()
                .orElseThrow();
    }

    private String open(Row row) {
        return WebhookSecretsAtRestTest.KEYS.open(
                row.getUUID("endpoint_id"),
                row.getUUID("id"),
                row.getString("key_id"),
                row.getBuffer("ciphertext").getBytes());
    }

    private List<Row> secretRows(String endpointId, String condition) {
        List<Row> rows = new ArrayList<>();
        pool.preparedQuery("SELECT * FROM webhook_endpoint_secrets WHERE endpoint_id = $1" + condition)
                .execute(Tuple.of(UUID.fromString(endpointId)))
                .await()
                .atMost(Duration.ofSeconds(10))
                .forEach(rows::add);
        return rows;
    }

    private static Shop newShop() {
        return TestSupport.newShop("endpoints");
    }
}
