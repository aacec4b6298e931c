package com.payments.api;

import static com.payments.api.TestSupport.ADMIN;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.KEY_B;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Authentication on every endpoint: missing, malformed, unknown, revoked (rotated away with {@code revokeOthers})
 * and other merchants' keys never reach or change anything. Each merchant call carries a body or target that would
 * succeed with the right key, so a hole shows as a 2xx and as a change in the database.
 *
 * <p>Endpoints are one line each in {@code merchantCalls}. {@code POST /v1/psp/webhooks} is authenticated by its
 * {@code Psp-Signature} instead of a key: its table ({@code webhookDeliveries}) has bad signatures, replayed old and
 * future timestamps and oversized bodies.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class AuthMatrixTest {
    static final String WEBHOOK_SECRET = "whsec_sandbox_secret";

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    /** A merchant call; {@code auth} is the whole Authorization header value, null for none. */
    record Call(String name, Function<RequestSpecification, Response> send, int statusForOtherMerchant) {}

    /** Targets owned by merchant A. */
    record Owned(UUID paymentId, String orderId, UUID refundId) {}

    static List<Call> merchantCalls(Owned a) {
        return List.of(
                new Call("GET payment", s -> s.get("/v1/payments/" + a.paymentId()), 404),
                new Call("GET payments by order", s -> s.get("/v1/payments?orderId=" + a.orderId()), 200),
                new Call("GET refund", s -> s.get("/v1/refunds/" + a.refundId()), 404),
                new Call(
                        "POST payment",
                        s -> s.header("Idempotency-Key", TestSupport.unique("auth"))
                                .contentType(ContentType.JSON)
                                .body(TestSupport.body(TestSupport.unique("auth"), 500, "EUR", "tok_visa"))
                                .post("/v1/payments"),
                        -1), // another merchant's key captures for that merchant: checked separately below
                new Call(
                        "POST refund",
                        s -> s.header("Idempotency-Key", TestSupport.unique("auth"))
                                .contentType(ContentType.JSON)
                                .body("{\"amount\":1}")
                                .post("/v1/payments/" + a.paymentId() + "/refunds"),
                        404));
    }

    static List<Call> adminCalls(UUID merchantId) {
        return List.of(
                new Call(
                        "POST admin merchant",
                        s -> s.contentType(ContentType.JSON)
                                .body("{\"name\":\"never\"}")
                                .post("/v1/admin/merchants"),
                        401),
                new Call(
                        "POST admin key rotation",
                        s -> s.post("/v1/admin/merchants/" + merchantId + "/keys?revokeOthers=true"),
                        401),
                new Call("GET admin operations items", s -> s.get("/v1/admin/operations?status=OPEN"), 401),
                new Call(
                        "POST admin resolve operations item",
                        s -> s.contentType(ContentType.JSON)
                                .body("{\"resolution\":\"never\"}")
                                .post("/v1/admin/operations/1/resolve"),
                        401));
    }

    static List<String> malformed() {
        return List.of(
                "Bearer",
                "Bearer ",
                "bearer" + KEY_A,
                "Basic " + java.util.Base64.getEncoder().encodeToString((KEY_A + ":").getBytes()),
                KEY_A,
                "Bearer " + KEY_A + " " + KEY_B,
                "Bearer " + KEY_A + "x",
                "Bearer " + KEY_A.substring(0, KEY_A.length() - 1),
                "Bearer " + KEY_A.toUpperCase(),
                "Bearer sk_live_" + UUID.randomUUID(),
                "Bearer " + "k".repeat(4000),
                "Bearer " + ADMIN,
                "Bearer ' OR '1'='1",
                "Token " + KEY_A);
    }

    @Test
    void everyEndpointRefusesMissingMalformedRevokedAndForeignKeys() {
        TestSupport.warmUp(pspUrl, breakers);
        // Merchant A owns a payment and a refund.
        String orderA = TestSupport.unique("order-auth");
        Response captured = TestSupport.capture(
                KEY_A, TestSupport.unique("auth"), TestSupport.body(orderA, 1000, "EUR", "tok_visa"));
        assertThat(captured.statusCode()).isEqualTo(201);
        UUID paymentA = UUID.fromString(captured.path("id"));
        UUID refundA = pool.preparedQuery(
                        "INSERT INTO refunds (payment_id, merchant_id, amount, currency, status) SELECT id, merchant_id,"
                                + " 1, currency, 'FAILED' FROM payments WHERE id = $1 RETURNING id")
                .execute(Tuple.of(paymentA))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getUUID("id");
        Owned a = new Owned(paymentA, orderA, refundA);

        // Merchant C: first key used, then rotated away with revokeOthers.
        Response created = given().header("Authorization", "Bearer " + ADMIN)
                .contentType(ContentType.JSON)
                .body("{\"name\":\"auth matrix\"}")
                .post("/v1/admin/merchants");
        assertThat(created.statusCode()).isEqualTo(201);
        String merchantC = created.path("merchantId");
        String oldKey = created.path("apiKey");
        Response capturedC = TestSupport.capture(
                oldKey, TestSupport.unique("auth"), TestSupport.body("order-c", 700, "EUR", "tok_visa"));
        assertThat(capturedC.statusCode()).isEqualTo(201);
        String paymentC = capturedC.path("id");
        Response rotated = given().header("Authorization", "Bearer " + ADMIN)
                .post("/v1/admin/merchants/" + merchantC + "/keys?revokeOthers=true");
        assertThat(rotated.statusCode()).isEqualTo(201);
        assertThat(rotated.<Integer>path("revokedKeys")).isEqualTo(1);
        String newKey = rotated.path("apiKey");
        // The per-instance auth cache (payments.auth.cache-ttl, 1 s in tests) lets the old key live that long.
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> TestSupport.merchant(oldKey)
                                .get("/v1/payments/" + paymentC)
                                .statusCode()
                        == 401);
        assertThat(TestSupport.merchant(newKey).get("/v1/payments/" + paymentC).statusCode())
                .isEqualTo(200);
        // The right key works on every call (so the refusals below are not vacuous).
        for (Call call : merchantCalls(a)) {
            assertThat(call.send().apply(TestSupport.merchant(KEY_A)).statusCode())
                    .as(call.name())
                    .isBetween(200, 202);
        }

        Map<String, Long> before = TestSupport.rowCounts(pool);
        List<String> refusals = new ArrayList<>(malformed());
        refusals.add("Bearer " + oldKey); // revoked
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (Call call : merchantCalls(a)) {
            checked += expect401(call, given(), "missing", failures);
            for (String auth : refusals) {
                checked += expect401(call, given().header("Authorization", auth), auth, failures);
            }
            if (call.statusForOtherMerchant() > 0) {
                for (String other : List.of(KEY_B, newKey)) {
                    Response r = call.send().apply(TestSupport.merchant(other));
                    checked++;
                    if (r.statusCode() != call.statusForOtherMerchant()
                            || r.asString().contains(paymentA.toString())) {
                        failures.add(
                                call.name() + " with another merchant's key: " + r.statusCode() + " " + r.asString());
                    }
                }
            }
        }
        for (Call call : adminCalls(UUID.fromString(merchantC))) {
            checked += expect401(call, given(), "missing", failures);
            for (String auth : refusals) {
                if (!auth.equals("Bearer " + ADMIN)) { // the one right token here
                    checked += expect401(call, given().header("Authorization", auth), auth, failures);
                }
            }
            for (String merchantKey : List.of(KEY_A, newKey)) {
                checked += expect401(
                        call, given().header("Authorization", "Bearer " + merchantKey), merchantKey, failures);
            }
        }
        assertThat(failures).isEmpty();
        assertThat(checked).isGreaterThan(100);
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
        assertThat(TestSupport.merchant(newKey).get("/v1/payments/" + paymentC).statusCode())
                .isEqualTo(200);

        // Another merchant reusing A's idempotency key gets its own payment, never A's answer.
        String sharedKey = TestSupport.unique("shared");
        Response first =
                TestSupport.capture(KEY_A, sharedKey, TestSupport.body("order-shared", 300, "EUR", "tok_visa"));
        Response other =
                TestSupport.capture(KEY_B, sharedKey, TestSupport.body("order-shared", 300, "EUR", "tok_visa"));
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(other.statusCode()).isEqualTo(201);
        assertThat(other.header("Idempotent-Replayed")).isNull();
        assertThat(other.<String>path("id")).isNotEqualTo(first.path("id"));
    }

    /** A webhook delivery that must be refused: body, Psp-Signature header (null: none), the expected code. */
    record Delivery(String name, byte[] body, String signature, String code, int status) {
        Delivery(String name, byte[] body, String signature, String code) {
            this(name, body, signature, code, 400);
        }
    }

    static List<Delivery> webhookDeliveries(String event, String otherMerchantKey) {
        byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();
        String good = PspWebhooks.sign(WEBHOOK_SECRET, now, bytes);
        String hex = good.substring(good.indexOf("v1=") + 3);
        byte[] tampered = event.replace("\"amount\":2300", "\"amount\":23000").getBytes(StandardCharsets.UTF_8);
        String big = event.substring(0, event.length() - 2) + ",\"pad\":\"" + "a".repeat(40_000) + "\"}}";
        String huge = event.substring(0, event.length() - 2) + ",\"pad\":\"" + "a".repeat(70_000) + "\"}}";
        byte[] bigBytes = big.getBytes(StandardCharsets.UTF_8);
        byte[] hugeBytes = huge.getBytes(StandardCharsets.UTF_8);
        String bad = "invalid_webhook_signature";
        return List.of(
                new Delivery("no signature", bytes, null, bad),
                new Delivery("empty signature", bytes, "", bad),
                new Delivery("only a timestamp", bytes, "t=" + now, bad),
                new Delivery("only a v1", bytes, "v1=" + hex, bad),
                new Delivery("timestamp not a number", bytes, "t=now,v1=" + hex, bad),
                new Delivery("timestamp overflow", bytes, "t=99999999999999999999,v1=" + hex, bad),
                new Delivery("v1 not hex", bytes, "t=" + now + ",v1=" + "z".repeat(64), bad),
                new Delivery("v1 truncated", bytes, "t=" + now + ",v1=" + hex.substring(0, 63), bad),
                new Delivery("v1 of another scheme", bytes, "t=" + now + ",v0=" + hex, bad),
                new Delivery("wrong secret", bytes, PspWebhooks.sign("whsec_wrong", now, bytes), bad),
                new Delivery("a merchant key as secret", bytes, PspWebhooks.sign(KEY_A, now, bytes), bad),
                new Delivery("tampered body", tampered, good, bad),
                new Delivery(
                        "signature of the timestamp changed", bytes, good.replace("t=" + now, "t=" + (now - 1)), bad),
                new Delivery("a bearer key instead", bytes, "Bearer " + otherMerchantKey, bad),
                new Delivery("very long header", bytes, "t=" + now + ",v1=" + "a".repeat(8000), bad),
                new Delivery(
                        "replayed, 6 min old",
                        bytes,
                        PspWebhooks.sign(WEBHOOK_SECRET, now - 360, bytes),
                        "stale_webhook"),
                new Delivery(
                        "replayed, 1 day old",
                        bytes,
                        PspWebhooks.sign(WEBHOOK_SECRET, now - 86_400, bytes),
                        "stale_webhook"),
                new Delivery("replayed, epoch", bytes, PspWebhooks.sign(WEBHOOK_SECRET, 0, bytes), "stale_webhook"),
                new Delivery(
                        "10 min in the future",
                        bytes,
                        PspWebhooks.sign(WEBHOOK_SECRET, now + 600, bytes),
                        "stale_webhook"),
                new Delivery(
                        "40 KB, correctly signed",
                        bigBytes,
                        PspWebhooks.sign(WEBHOOK_SECRET, now, bigBytes),
                        "body_too_large"),
                new Delivery(
                        "70 KB, correctly signed",
                        hugeBytes,
                        PspWebhooks.sign(WEBHOOK_SECRET, now, hugeBytes),
                        "body_too_large",
                        413));
    }

    @Test
    void webhookRefusesBadSignaturesReplayedTimestampsAndOversizedBodies() {
        UUID payment = Fixtures.insertPayment(pool, "UNKNOWN", 2300, "tok_visa");
        String event = "{\"id\":\"evt_" + UUID.randomUUID()
                + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_auth\","
                + "\"reference\":\"" + payment + "\",\"status\":\"succeeded\",\"amount\":2300,\"currency\":\"EUR\","
                + "\"created\":\"2026-01-01T00:00:00.000Z\"}}";
        Map<String, Long> before = TestSupport.rowCounts(pool);
        List<String> failures = new ArrayList<>();
        List<Delivery> deliveries = webhookDeliveries(event, KEY_B);
        for (Delivery d : deliveries) {
            RequestSpecification spec = given().contentType("application/json").body(d.body());
            if (d.signature() != null) {
                spec = spec.header(PspWebhooks.SANDBOX_HEADER, d.signature());
            }
            Response r = spec.post("/v1/psp/webhooks");
            if (r.statusCode() != d.status()
                    || !String.valueOf(r.contentType()).startsWith("application/problem+json")
                    || !d.code().equals(r.path("code"))) {
                failures.add(d.name() + ": " + r.statusCode() + " " + r.contentType() + " " + r.asString());
            }
        }
        assertThat(failures).isEmpty();
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
        assertThat(TestSupport.paymentStatus(pool, payment)).isEqualTo("UNKNOWN");

        // The same event correctly signed is accepted and applied (so the refusals above are not vacuous), and a
        // replay of that very delivery (same bytes, same signature) is a duplicate that changes nothing.
        byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
        String signature = PspWebhooks.sign(WEBHOOK_SECRET, Instant.now().getEpochSecond(), bytes);
        for (boolean duplicate : List.of(false, true)) {
            Response r = given().contentType("application/json")
                    .header(PspWebhooks.SANDBOX_HEADER, signature)
                    .body(bytes)
                    .post("/v1/psp/webhooks");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.<Boolean>path("duplicate")).isEqualTo(duplicate);
        }
        assertThat(TestSupport.paymentStatus(pool, payment)).isEqualTo("CAPTURED");
    }

    private static int expect401(Call call, RequestSpecification spec, String auth, List<String> failures) {
        Response r = call.send().apply(spec);
        String shown = auth.length() > 40 ? auth.substring(0, 40) + "…" : auth;
        if (r.statusCode() != 401) {
            failures.add(call.name() + " with [" + shown + "]: " + r.statusCode());
        } else if (!"unauthorized".equals(r.path("code"))) {
            failures.add(call.name() + " with [" + shown + "]: code " + r.path("code"));
        } else if (call.statusForOtherMerchant() != 401 && !"Bearer".equals(r.header("WWW-Authenticate"))) {
            failures.add(call.name() + " with [" + shown + "]: WWW-Authenticate " + r.header("WWW-Authenticate"));
        }
        return 1;
    }
}
