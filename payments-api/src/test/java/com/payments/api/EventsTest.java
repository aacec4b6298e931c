package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.TestSupport.Shop;
import com.payments.api.events.EventRetentionJob;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The merchant's events feed, {@code GET /v1/events} (docs/api.md "Events"). */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class EventsTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @Inject
    EventRetentionJob retention;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @Test
    void theFeedHoldsEveryPaymentEventOfTheMerchantNewestFirstAsPublished() {
        Shop shop = newShop();
        List<String> paymentIds = new ArrayList<>();
        for (String source : List.of("tok_visa", "tok_chargeDeclined", "tok_visa", "tok_visa")) {
            Response r = capture(shop.key(), unique("k"), json(source));
            r.then().statusCode(source.equals("tok_visa") ? 201 : 402);
            paymentIds.add(0, r.path("id"));
        }

        Response feed = merchant(shop.key()).get("/v1/events");
        feed.then().statusCode(200);
        assertThat(feed.<List<String>>path("data.data.paymentId")).isEqualTo(paymentIds);
        assertThat(feed.<List<String>>path("data.type"))
                .containsExactly("PaymentCaptured", "PaymentCaptured", "PaymentFailed", "PaymentCaptured");
        assertThat(feed.<Boolean>path("has_more")).isFalse();
        // the id is the eventId of the record the relay publishes, and data is that record
        List<String> ids = feed.path("data.id");
        assertThat(feed.<List<String>>path("data.data.eventId")).isEqualTo(ids);
        assertThat(outboxEventIds(paymentIds)).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(feed.<String>path("data[0].data.merchantId"))
                .isEqualTo(shop.id().toString());
        assertThat(feed.<String>path("data[2].data.declineCode")).isNotBlank();
        assertThat(feed.<Map<String, String>>path("data[0].data.metadata")).isEqualTo(Map.of("n", "1"));

        assertThat(merchant(shop.key())
                        .queryParam("type", "PaymentFailed")
                        .get("/v1/events")
                        .<List<String>>path("data.data.paymentId"))
                .containsExactly(paymentIds.get(2));
        String thirdCreated = feed.path("data[1].createdAt");
        assertThat(merchant(shop.key())
                        .queryParam("created[gte]", thirdCreated)
                        .get("/v1/events")
                        .<List<String>>path("data.id"))
                .isEqualTo(ids.subList(0, 2));
        assertThat(pageThrough(shop.key(), Map.of("type", "PaymentCaptured"), 2))
                .isEqualTo(List.of(ids.get(0), ids.get(1), ids.get(3)));
        Response before = merchant(shop.key())
                .queryParam("limit", 2)
                .queryParam("ending_before", ids.get(3))
                .get("/v1/events");
        assertThat(before.<List<String>>path("data.id")).isEqualTo(ids.subList(1, 3));
        assertThat(before.<Boolean>path("has_more")).isTrue();

        Response one = merchant(shop.key()).get("/v1/events/" + ids.get(2));
        one.then().statusCode(200);
        assertThat(one.<String>path("type")).isEqualTo("PaymentFailed");
        assertThat(one.<String>path("data.paymentId")).isEqualTo(paymentIds.get(2));

        // another merchant sees none of it
        assertThat(merchant(KEY_A).get("/v1/events").<List<String>>path("data.id"))
                .doesNotContainAnyElementsOf(ids);
        merchant(KEY_A).get("/v1/events/" + ids.get(0)).then().statusCode(404);
    }

    @Test
    void badParametersAreRefusedWithAProblem() {
        Shop shop = newShop();
        capture(shop.key(), unique("k"), json("tok_visa")).then().statusCode(201);
        String theirs = merchant(KEY_A).queryParam("limit", 1).get("/v1/events").path("data[0].id");
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("/v1/events?type=payment_intent.succeeded", "invalid_type");
        cases.put("/v1/events?type=", "invalid_type");
        cases.put("/v1/events?created[gte]=yesterday", "invalid_created");
        cases.put("/v1/events?created[gte]=1764547200", "invalid_created");
        cases.put("/v1/events?limit=0", "invalid_limit");
        cases.put("/v1/events?limit=101", "invalid_limit");
        cases.put("/v1/events?starting_after=nope", "invalid_cursor");
        if (theirs != null) {
            cases.put("/v1/events?starting_after=" + theirs, "invalid_cursor");
        }
        cases.forEach((path, code) -> {
            Response r = merchant(shop.key()).urlEncodingEnabled(false).get(path);
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(r.contentType()).as(path).startsWith("application/problem+json");
            assertThat(r.<String>path("code")).as(path).isEqualTo(code);
        });
        merchant(shop.key()).get("/v1/events/" + UUID.randomUUID()).then().statusCode(404);
        merchant(shop.key()).get("/v1/events/nope").then().statusCode(404);
        given().get("/v1/events").then().statusCode(401);
    }

    @Test
    void eventsOlderThanTheRetentionAreDeletedAndNewerOnesKept() {
        Shop shop = newShop();
        UUID old = UUID.randomUUID();
        UUID recent = UUID.randomUUID();
        for (Object[] row : List.of(new Object[] {old, 31}, new Object[] {recent, 29})) {
            pool.preparedQuery(
                            """
                            INSERT INTO merchant_events (id, merchant_id, type, payload, created_at, payment_id, version)
                            VALUES ($1, $2, 'PaymentCaptured', '{}', now() - make_interval(days => $3),
                                    gen_random_uuid(), 1)""")
                    .execute(Tuple.of(row[0], shop.id(), row[1]))
                    .await()
                    .atMost(Duration.ofSeconds(10));
        }
        assertThat(retention.purge(10, 0L).await().atMost(Duration.ofSeconds(30)))
                .isGreaterThanOrEqualTo(1L);
        assertThat(feedRows(old)).isZero();
        assertThat(feedRows(recent)).isOne();
        assertThat(merchant(shop.key()).get("/v1/events").<List<String>>path("data.id"))
                .containsExactly(recent.toString());
    }

    /**
     * The feed, {@code GET /v1/events/{id}} and redeliver show no event older than the retention, also while the
     * retention job (off in tests) has not deleted it yet.
     */
    @Test
    void eventsOlderThanTheRetentionAreHiddenBeforeTheJobDeletesThem() {
        Shop shop = newShop();
        UUID old = UUID.randomUUID();
        UUID recent = UUID.randomUUID();
        for (Object[] row : List.of(new Object[] {old, 31 * 24 * 60}, new Object[] {recent, 30 * 24 * 60 - 5})) {
            pool.preparedQuery(
                            """
                            INSERT INTO merchant_events (id, merchant_id, type, payload, created_at, payment_id, version)
                            VALUES ($1, $2, 'PaymentCaptured', '{}', now() - make_interval(mins => $3),
                                    gen_random_uuid(), 1)""")
                    .execute(Tuple.of(row[0], shop.id(), row[1]))
                    .await()
                    .atMost(Duration.ofSeconds(10));
        }

        assertThat(merchant(shop.key()).get("/v1/events").<List<String>>path("data.id"))
                .containsExactly(recent.toString());
        assertThat(merchant(shop.key())
                        .queryParam("created[gte]", "2000-01-01T00:00:00Z")
                        .get("/v1/events")
                        .<List<String>>path("data.id"))
                .containsExactly(recent.toString());
        assertThat(merchant(shop.key())
                        .queryParam("starting_after", recent.toString())
                        .get("/v1/events")
                        .<List<String>>path("data.id"))
                .isEmpty();
        merchant(shop.key()).get("/v1/events/" + old).then().statusCode(404);
        merchant(shop.key()).get("/v1/events/" + recent).then().statusCode(200);
        merchant(shop.key()).post("/v1/events/" + old + "/redeliver").then().statusCode(404);
        // the recent one passes the event check and stops at the endpoints: this merchant has none
        Response redeliver = merchant(shop.key()).post("/v1/events/" + recent + "/redeliver");
        redeliver.then().statusCode(409);
        assertThat(redeliver.<String>path("code")).isEqualTo("no_matching_endpoint");
        // hidden, not deleted: the job's work is still to do
        assertThat(feedRows(old)).isOne();
    }

    private long feedRows(UUID event) {
        return pool.preparedQuery("SELECT count(*) FROM merchant_events WHERE id = $1")
                .execute(Tuple.of(event))
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next()
                .getLong(0);
    }

    /**
     * Each event carries its payment's version, +1 per event of the payment (a refund event included), and the
     * payment's state when it was written; the counter does not start again when the feed's old rows are deleted.
     */
    @Test
    void eachEventCarriesThePaymentsVersionAndState() {
        Shop shop = newShop();
        Response captured = capture(shop.key(), unique("k"), json("tok_visa"));
        captured.then().statusCode(201);
        UUID payment = UUID.fromString(captured.path("id"));
        String capturedEvent = merchant(shop.key()).get("/v1/events").path("data[0].id");

        Response first = merchant(shop.key()).get("/v1/events/" + capturedEvent);
        first.then().statusCode(200);
        assertThat(first.<Integer>path("version")).isEqualTo(1);
        assertThat(first.<String>path("payment.status")).isEqualTo("CAPTURED");
        assertThat(first.<Integer>path("payment.refundedAmount")).isZero();

        // a refund of 400 succeeds (as refunds-worker writes it: the payment row, then the event, in one transaction)
        UUID refundEvent = UUID.randomUUID();
        pool.withTransaction(conn -> conn.preparedQuery("UPDATE payments SET refunded_amount = 400 WHERE id = $1")
                        .execute(Tuple.of(payment))
                        .chain(() -> insertEvent(conn, refundEvent, "RefundSucceeded", payment, shop.id(), payment)))
                .await()
                .atMost(Duration.ofSeconds(10));
        Response refund = merchant(shop.key()).get("/v1/events/" + refundEvent);
        refund.then().statusCode(200);
        assertThat(refund.<Integer>path("version")).isEqualTo(2);
        assertThat(refund.<Map<String, Object>>path("payment")).isEqualTo(paymentRow(payment));
        assertThat(refund.<Integer>path("payment.refundedAmount")).isEqualTo(400);
        assertThat(merchant(shop.key()).get("/v1/events").<List<Integer>>path("data.version"))
                .containsExactly(2, 1);

        // the feed's retention deletes the payment's events: the next one still counts on
        pool.preparedQuery("DELETE FROM merchant_events WHERE payment_id = $1")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        UUID later = UUID.randomUUID();
        pool.withTransaction(conn -> insertEvent(conn, later, "RefundFailed", payment, shop.id(), payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        Response third = merchant(shop.key()).get("/v1/events/" + later);
        assertThat(third.<Integer>path("version")).isEqualTo(3);
        assertThat(third.<Map<String, Object>>path("payment")).isEqualTo(paymentRow(payment));
    }

    /**
     * The versions come from the feed itself (V96): a payment's events write no counter row (one write less per
     * event); only the retention's deletion of the payment's last event leaves its highest version in
     * {@code payment_event_versions}, and the next event counts on from there.
     */
    @Test
    void theCounterIsWrittenOnlyWhenTheRetentionDeletesThePaymentsLastEvent() {
        Shop shop = newShop();
        Response captured = capture(shop.key(), unique("k"), json("tok_visa"));
        captured.then().statusCode(201);
        UUID payment = UUID.fromString(captured.path("id"));
        UUID second = UUID.randomUUID();
        pool.withTransaction(conn -> insertEvent(conn, second, "RefundSucceeded", payment, shop.id(), payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        assertThat(merchant(shop.key()).get("/v1/events/" + second).<Integer>path("version"))
                .isEqualTo(2);
        assertThat(counter(payment)).isNull();

        // the retention deletes the first event only: the feed still holds the highest version
        pool.preparedQuery("DELETE FROM merchant_events WHERE payment_id = $1 AND version = 1")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        assertThat(counter(payment)).isNull();

        // the job deletes the last one: its version stays as the counter
        pool.preparedQuery(
                        "UPDATE merchant_events SET created_at = now() - make_interval(days => 31) WHERE payment_id = $1")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        retention.purge(100, 0L).await().atMost(Duration.ofSeconds(30));
        assertThat(feedRows(second)).isZero();
        assertThat(counter(payment)).isEqualTo(2L);

        UUID third = UUID.randomUUID();
        pool.withTransaction(conn -> insertEvent(conn, third, "RefundFailed", payment, shop.id(), payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        assertThat(merchant(shop.key()).get("/v1/events/" + third).<Integer>path("version"))
                .isEqualTo(3);
        assertThat(counter(payment)).isEqualTo(2L);
    }

    private Long counter(UUID payment) {
        var rows = pool.preparedQuery("SELECT version FROM payment_event_versions WHERE payment_id = $1")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10));
        return rows.size() == 0 ? null : rows.iterator().next().getLong("version");
    }

    /**
     * Concurrent transactions writing events of one payment get distinct, consecutive versions: the feed trigger's
     * lock on the payment orders them even when their outbox keys differ (so the outbox's per-key lock does not).
     */
    @Test
    void concurrentEventsOfOnePaymentGetConsecutiveVersions() {
        Shop shop = newShop();
        Response captured = capture(shop.key(), unique("k"), json("tok_visa"));
        captured.then().statusCode(201);
        UUID payment = UUID.fromString(captured.path("id"));
        int writers = 6;
        List<Uni<Void>> all = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            UUID event = UUID.randomUUID();
            // each holds the payment's lock for a while before committing, so the others wait on it
            all.add(pool.withTransaction(conn -> insertEvent(conn, event, "RefundFailed", payment, shop.id(), event)
                    .chain(() -> conn.query("SELECT pg_sleep(0.2)").execute())
                    .replaceWithVoid()));
        }
        Uni.join().all(all).andFailFast().await().atMost(Duration.ofSeconds(30));

        List<Long> versions = new ArrayList<>();
        pool.preparedQuery("SELECT version FROM merchant_events WHERE payment_id = $1 ORDER BY version")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10))
                .forEach(row -> versions.add(row.getLong("version")));
        assertThat(versions).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
    }

    /** Inserts a payment-events outbox row for the payment (the trigger writes the feed's row); key as given. */
    private static Uni<Void> insertEvent(
            SqlConnection conn, UUID eventId, String type, UUID payment, UUID merchantId, UUID key) {
        JsonObject payload = new JsonObject()
                .put("eventId", eventId.toString())
                .put("type", type)
                .put("refundId", UUID.randomUUID().toString())
                .put("paymentId", payment.toString())
                .put("merchantId", merchantId.toString())
                .put("amount", 400)
                .put("currency", "EUR")
                .put("occurredAt", "2026-01-01T00:00:00Z")
                .put("metadata", new JsonObject());
        return conn.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload)
                        VALUES ($1, $2, 'payment-events', $3, $4)""")
                .execute(Tuple.of(eventId, type, key.toString(), payload))
                .replaceWithVoid();
    }

    /** The payments row as an event's {@code payment} shows it. */
    private Map<String, Object> paymentRow(UUID payment) {
        Row row = pool.preparedQuery("SELECT id, status, amount, currency, refunded_amount FROM payments WHERE id = $1")
                .execute(Tuple.of(payment))
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next();
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("id", row.getUUID("id").toString());
        state.put("status", row.getString("status"));
        state.put("amount", row.getLong("amount").intValue());
        state.put("currency", row.getString("currency"));
        state.put("refundedAmount", row.getLong("refunded_amount").intValue());
        return state;
    }

    private List<String> outboxEventIds(List<String> paymentIds) {
        List<String> ids = new ArrayList<>();
        pool.preparedQuery("SELECT event_id FROM outbox WHERE topic = 'payment-events' AND key = ANY($1)")
                .execute(Tuple.of(paymentIds.toArray(String[]::new)))
                .await()
                .atMost(Duration.ofSeconds(10))
                .forEach(row -> ids.add(row.getUUID("event_id").toString()));
        return ids;
    }

    private static List<String> pageThrough(String key, Map<String, String> filter, int limit) {
        List<String> seen = new ArrayList<>();
        String after = null;
        boolean more = true;
        while (more) {
            Map<String, Object> params = new LinkedHashMap<>(filter);
            params.put("limit", limit);
            if (after != null) {
                params.put("starting_after", after);
            }
            Response page = merchant(key).queryParams(params).get("/v1/events");
            page.then().statusCode(200);
            List<String> data = page.path("data.id");
            seen.addAll(data);
            more = page.path("has_more");
            after = data.isEmpty() ? null : data.get(data.size() - 1);
        }
        return seen;
    }

    private static String json(String source) {
        return "{\"orderId\":\"" + unique("order") + "\",\"amount\":1000,\"currency\":\"EUR\",\"source\":\"" + source
                + "\",\"metadata\":{\"n\":\"1\"}}";
    }

    private static Shop newShop() {
        return TestSupport.newShop("events");
    }
}
