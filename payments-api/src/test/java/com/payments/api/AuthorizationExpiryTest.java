package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.pspCounters;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.expiry.AuthorizationExpiry;
import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The expiry of authorizations not captured within {@code payments.authorizations.expire-after} (7 days; issue 42),
 * and the events of manual capture in the feed and in webhook endpoints' subscriptions. Real PostgreSQL and the
 * sandbox PSP (its counters say which voids it got); an authorization is made old by moving its {@code authorized_at}
 * back, the sandbox clock forward.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class AuthorizationExpiryTest {
    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @Inject
    AuthorizationExpiry expiry;

    @Inject
    PaymentResolver resolver;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @AfterEach
    void realClock() {
        TestSupport.psp(pspUrl).delete("/test/clock").then().statusCode(200);
    }

    /** An authorization of {@code amount} through the merchant API (201 AUTHORIZED); its payment id. */
    private static UUID authorize(String apiKey, long amount, String source) {
        Response response = TestSupport.capture(
                apiKey,
                unique("key"),
                "{\"orderId\":\"" + unique("order") + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"source\":\""
                        + source + "\",\"captureMethod\":\"manual\"}");
        response.then().statusCode(201);
        assertThat(response.<String>path("status")).isEqualTo("AUTHORIZED");
        return UUID.fromString(response.path("id"));
    }

    private void age(UUID id, int days) {
        TestSupport.ageAuthorization(pool, id, days);
    }

    private long events(UUID id, String type) {
        return count(pool, "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = $2", id.toString(), type);
    }

    private long transitions(UUID id, String from, String to, String actor) {
        return count(
                pool,
                "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = $2 AND to_status = $3"
                        + " AND actor = $4",
                id,
                from,
                to,
                actor);
    }

    private long booked(UUID id) {
        return count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString());
    }

    @Test
    void anAuthorizationOlderThanExpireAfterIsVoidedOnceAndExpiresAYoungOneIsLeftAlone() {
        UUID old = authorize(KEY_A, 1000, "tok_visa");
        UUID young = authorize(KEY_A, 500, "tok_visa");
        UUID almost = authorize(KEY_A, 700, "tok_visa");
        age(old, 8);
        age(almost, 6);

        List<String> outcomes = expiry.runOnce().await().indefinitely();

        assertThat(outcomes).contains("expired");
        assertThat(paymentStatus(pool, old)).isEqualTo("EXPIRED");
        Response psp = pspCounters(pspUrl, old);
        assertThat(psp.<Integer>path("voidRequests")).as("one void sent").isEqualTo(1);
        assertThat(psp.<Integer>path("voidMovements")).as("voided at the PSP").isEqualTo(1);
        assertThat(psp.<Integer>path("chargeMovements")).isZero();
        assertThat(events(old, "PaymentExpired")).isEqualTo(1);
        assertThat(booked(old)).as("an expiry books nothing").isZero();
        assertThat(transitions(old, "AUTHORIZED", "EXPIRING", "expiry")).isEqualTo(1);
        assertThat(transitions(old, "EXPIRING", "EXPIRED", "expiry")).isEqualTo(1);
        Response read = merchant(KEY_A).get("/v1/payments/" + old);
        assertThat(read.<String>path("status")).isEqualTo("EXPIRED");
        assertThat(read.<Integer>path("refundableAmount")).isZero();

        for (UUID left : List.of(young, almost)) {
            assertThat(paymentStatus(pool, left)).isEqualTo("AUTHORIZED");
            assertThat(pspCounters(pspUrl, left).<Integer>path("voidRequests")).isZero();
            assertThat(events(left, "PaymentExpired")).isZero();
        }

        expiry.runOnce().await().indefinitely();
        assertThat(pspCounters(pspUrl, old).<Integer>path("voidRequests"))
                .as("an expired payment is not claimed again")
                .isEqualTo(1);
        assertThat(events(old, "PaymentExpired")).isEqualTo(1);
        Response capture =
                merchant(KEY_A).header("Idempotency-Key", unique("cap")).post("/v1/payments/" + old + "/capture");
        capture.then().statusCode(409);
        assertThat(capture.<String>path("code")).isEqualTo("payment_not_authorized");
    }

    @Test
    void anAuthorizationTheSandboxAlreadyLetLapseIsExpiredToo() {
        UUID id = authorize(KEY_A, 300, "tok_visa");
        age(id, 8);
        TestSupport.psp(pspUrl)
                .contentType(ContentType.JSON)
                .body("{\"instant\":\"" + Instant.now().plus(Duration.ofDays(8)) + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);

        expiry.runOnce().await().indefinitely();

        assertThat(paymentStatus(pool, id)).isEqualTo("EXPIRED");
        Response psp = pspCounters(pspUrl, id);
        assertThat(psp.<Integer>path("voidRequests")).isEqualTo(1);
        assertThat(psp.<Integer>path("voidMovements"))
                .as("expired at the PSP, not voided")
                .isZero();
        assertThat(events(id, "PaymentExpired")).isEqualTo(1);
    }

    @Test
    void ofACaptureRacingTheExpiryExactlyOneWins() throws Exception {
        String apiKey = TestSupport.newShop("expiry-race").key();
        for (int round = 0; round < 3; round++) {
            UUID id = authorize(apiKey, 1000, "tok_visa");
            age(id, 8);
            List<Callable<Integer>> racers = new ArrayList<>();
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            for (int i = 0; i < 8; i++) {
                var request = TestSupport.merchantPost(
                        "/v1/payments/" + id + "/capture", apiKey, unique("cap"), "{\"amount\":" + (100 + i) + "}");
                racers.add(() -> client.send(request, HttpResponse.BodyHandlers.ofString())
                        .statusCode());
            }
            racers.add(() -> {
                expiry.runOnce().await().indefinitely();
                return -1;
            });

            List<Integer> answers = together(racers);

            String status = paymentStatus(pool, id);
            Response psp = pspCounters(pspUrl, id);
            int captures = psp.path("captureRequests");
            int voids = psp.path("voidRequests");
            assertThat(captures + voids).as("only the winner called the PSP").isEqualTo(1);
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM payment_transitions WHERE payment_id = $1"
                                    + " AND from_status = 'AUTHORIZED'",
                            id))
                    .isEqualTo(1);
            long won = answers.stream().filter(s -> s == 200).count();
            long refused = answers.stream().filter(s -> s == 409).count();
            if (status.equals("CAPTURED")) {
                assertThat(won).isEqualTo(1);
                assertThat(refused).isEqualTo(7);
                assertThat(voids).isZero();
                assertThat(events(id, "PaymentExpired")).isZero();
            } else {
                assertThat(status).isEqualTo("EXPIRED");
                assertThat(won).isZero();
                assertThat(refused).isEqualTo(8);
                assertThat(captures).isZero();
                assertThat(booked(id)).isZero();
                assertThat(events(id, "PaymentExpired")).isEqualTo(1);
            }
        }
    }

    /** Runs the calls at once: one thread each, released together by a latch; their results in order. */
    private static <T> List<T> together(List<Callable<T>> calls) throws Exception {
        CountDownLatch ready = new CountDownLatch(calls.size());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(calls.size());
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Callable<T> call : calls) {
                futures.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    return call.call();
                }));
            }
            ready.await();
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get());
            }
            return results;
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aVoidWhoseAnswerIsLostIsSettledByTheResolverUnderTheSameKey() {
        UUID id = authorize(KEY_A, 800, "tok_captureTimeout");
        age(id, 8);

        List<String> outcomes = expiry.runOnce().await().indefinitely();

        assertThat(outcomes).contains("unknown");
        assertThat(paymentStatus(pool, id)).isEqualTo("EXPIRING");
        assertThat(events(id, "PaymentExpired")).isZero();
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND last_error LIKE 'unknown: %'", id))
                .isEqualTo(1);
        expiry.runOnce().await().indefinitely();
        assertThat(pspCounters(pspUrl, id).<Integer>path("voidRequests"))
                .as("the expiry does not claim an EXPIRING payment again")
                .isEqualTo(1);

        resolver.runOnce().await().indefinitely();

        assertThat(paymentStatus(pool, id)).isEqualTo("EXPIRED");
        Response psp = pspCounters(pspUrl, id);
        assertThat(psp.<Integer>path("voidRequests"))
                .as("the resolver re-sent the same void")
                .isEqualTo(2);
        assertThat(psp.<Integer>path("voidMovements")).as("voided once").isEqualTo(1);
        assertThat(events(id, "PaymentExpired")).isEqualTo(1);
        assertThat(transitions(id, "EXPIRING", "EXPIRED", "resolver")).isEqualTo(1);
    }

    @Test
    void theFeedFiltersByTheManualCaptureEventsAndEndpointsSubscribeToThem() {
        TestSupport.Shop shop = TestSupport.newShop("expiry-events");
        UUID expired = authorize(shop.key(), 100, "tok_visa");
        UUID canceled = authorize(shop.key(), 200, "tok_visa");
        merchant(shop.key())
                .header("Idempotency-Key", unique("cancel"))
                .post("/v1/payments/" + canceled + "/cancel")
                .then()
                .statusCode(200);
        age(expired, 8);
        expiry.runOnce().await().indefinitely();
        assertThat(paymentStatus(pool, expired)).isEqualTo("EXPIRED");

        for (String type : List.of("PaymentAuthorized", "PaymentCanceled", "PaymentExpired")) {
            Response feed = merchant(shop.key()).get("/v1/events?type=" + type);
            feed.then().statusCode(200);
            List<String> types = feed.path("data.type");
            List<String> payments = feed.path("data.payment.id");
            assertThat(types).as(type).isNotEmpty().allMatch(type::equals);
            List<String> expected =
                    switch (type) {
                        case "PaymentAuthorized" -> List.of(canceled.toString(), expired.toString());
                        case "PaymentCanceled" -> List.of(canceled.toString());
                        default -> List.of(expired.toString());
                    };
            assertThat(payments).as(type).containsExactlyInAnyOrderElementsOf(expected);
        }

        Response endpoint = merchant(shop.key())
                .contentType(ContentType.JSON)
                .body("{\"url\":\"http://127.0.0.1:21001/hook\","
                        + "\"events\":[\"PaymentAuthorized\",\"PaymentCanceled\",\"PaymentExpired\"]}")
                .post("/v1/webhook_endpoints");
        endpoint.then().statusCode(201);
        assertThat(endpoint.<List<String>>path("events"))
                .containsExactly("PaymentAuthorized", "PaymentCanceled", "PaymentExpired");
    }
}
