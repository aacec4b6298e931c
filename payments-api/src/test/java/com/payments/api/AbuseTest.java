package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Property: for every endpoint, a hostile request (generated headers, paths, query, body; see {@link Hostile}) gets
 * an answer below 500, without a stack trace, class name or internal detail, without echoing a card number, and
 * leaves every table exactly as it was (row contents compared, not only counts). Bounded: {@code abuse.tries}
 * requests per endpoint (default 150); {@code abuse.seed} replays a run (the seed is printed on failure).
 *
 * <p>Endpoints are one line each in {@link #ENDPOINTS}. {@code POST /v1/psp/webhooks} ({@code Kind.WEBHOOK}) is
 * authenticated by its signature, not a key: every generated delivery is unsigned, badly signed (hostile header, wrong
 * secret, signature of other bytes), signed with a replayed old or a future timestamp, or correctly signed but over
 * the size limit; its body is hostile or a real event that would capture an UNKNOWN payment if it were accepted. The
 * same event correctly signed is then accepted, so the refusals are not vacuous.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class AbuseTest {
    static final int TRIES = Integer.getInteger("abuse.tries", 150);
    static final long SEED = Long.getLong("abuse.seed", System.nanoTime());

    /** Signs of an internal detail in an answer. */
    static final Pattern INTERNAL = Pattern.compile(
            "Exception|Caused by|\\tat |\\bat [a-z]+\\.[a-z]+\\.|java\\.|jakarta\\.|javax\\.|io\\.vertx|io\\.quarkus"
                    + "|io\\.smallrye|org\\.jboss|com\\.fasterxml|com\\.payments|SQLSTATE|postgres|syntax error"
                    + "|relation \"|duplicate key|violates|stack",
            Pattern.CASE_INSENSITIVE);

    enum Kind {
        /** Merchant POST with a JSON body and an Idempotency-Key; the body is always invalid. */
        MERCHANT_POST,
        /** Merchant GET; 200 is fine (e.g. an empty list), a change is not. */
        MERCHANT_GET,
        /** Operator POST: either a wrong token, or the right token with an invalid body or an unknown merchant. */
        ADMIN_POST,
        /** PSP webhook: never a valid signature on a body within the limit (see the class comment). */
        WEBHOOK
    }

    /** {id} in a path is replaced by a hostile segment, {q} in a query by a hostile value. */
    record Endpoint(String name, String method, String path, Kind kind, Arbitrary<String> badBody) {}

    static final List<Endpoint> ENDPOINTS = List.of(
            new Endpoint("capture", "POST", "/v1/payments", Kind.MERCHANT_POST, Hostile.BAD_CAPTURE_BODY),
            new Endpoint("payment", "GET", "/v1/payments/{id}", Kind.MERCHANT_GET, null),
            new Endpoint("payments-by-order", "GET", "/v1/payments?orderId={q}", Kind.MERCHANT_GET, null),
            new Endpoint("refund", "GET", "/v1/refunds/{id}", Kind.MERCHANT_GET, null),
            new Endpoint("payments-page", "GET", "/v1/payments?limit={q}&starting_after={q}", Kind.MERCHANT_GET, null),
            new Endpoint("refunds-page", "GET", "/v1/refunds?paymentId={q}&ending_before={q}", Kind.MERCHANT_GET, null),
            new Endpoint("create-merchant", "POST", "/v1/admin/merchants", Kind.ADMIN_POST, Hostile.BAD_ADMIN_BODY),
            new Endpoint("issue-key", "POST", "/v1/admin/merchants/{id}/keys?revokeOthers={q}", Kind.ADMIN_POST, null),
            new Endpoint(
                    "resolve-operations-item",
                    "POST",
                    "/v1/admin/operations/{id}/resolve",
                    Kind.ADMIN_POST,
                    Hostile.BAD_ADMIN_BODY),
            new Endpoint(
                    "refund-reservation",
                    "POST",
                    "/v1/payments/{id}/refunds",
                    Kind.MERCHANT_POST,
                    Hostile.BAD_REFUND_BODY),
            new Endpoint("psp-webhook", "POST", "/v1/psp/webhooks", Kind.WEBHOOK, Hostile.BAD_CAPTURE_BODY));

    /** The webhook secret of the test profile (the sandbox's default). */
    static final String WEBHOOK_SECRET = "whsec_sandbox_secret";

    static final List<String> METHODS = List.of("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");

    @Inject
    Pool pool;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    /** A generated request, printable for a failure report. */
    record Attempt(String method, String path, Map<String, String> headers, String body) {
        @Override
        public String toString() {
            String shown = body == null ? "<none>" : body.length() > 300 ? body.substring(0, 300) + "…" : body;
            String p = path.length() > 300 ? path.substring(0, 300) + "…" : path;
            Map<String, String> h = new LinkedHashMap<>();
            headers.forEach((k, v) -> h.put(k, v.length() > 100 ? v.substring(0, 100) + "…" : v));
            return method + " " + p + " " + h + " body=" + shown;
        }
    }

    @TestFactory
    List<DynamicTest> hostileRequestsNeverFailChangeOrLeak() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Endpoint endpoint : ENDPOINTS) {
            tests.add(DynamicTest.dynamicTest(endpoint.name(), () -> property(endpoint)));
        }
        return tests;
    }

    /** The UNKNOWN payment that the webhook property's real events are about. */
    private UUID webhookTarget;

    private void property(Endpoint endpoint) {
        long seed = SEED ^ endpoint.name().hashCode();
        Random random = new Random(seed);
        Hostile.seed(seed);
        if (endpoint.kind() == Kind.WEBHOOK) {
            webhookTarget = Fixtures.insertPayment(pool, "UNKNOWN", 4200, "tok_visa");
        }
        Map<String, String> before = fingerprint();
        List<String> cards = new ArrayList<>();
        try (LogCapture logs = new LogCapture()) {
            for (int i = 0; i < TRIES; i++) {
                Attempt attempt = generate(endpoint, random);
                if (attempt.body() != null) {
                    java.util.regex.Matcher m =
                            Pattern.compile("[0-9][0-9 -]{11,}[0-9]").matcher(attempt.body());
                    while (m.find()) {
                        String digits = m.group().replaceAll("[ -]", "");
                        if (digits.length() >= 13 && digits.length() <= 19 && LogCapture.luhn(digits)) {
                            cards.add(m.group());
                        }
                    }
                }
                String context = "seed " + SEED + " (-Dabuse.seed), try " + i + ": " + attempt;
                RawHttp.Answer r = send(attempt);
                int status = r.status();
                String answer = r.body();
                assertThat(status).as(context).isBetween(200, 499);
                if (endpoint.kind() != Kind.MERCHANT_GET && attempt.method().equals("POST")) {
                    assertThat(status).as(context).isGreaterThanOrEqualTo(400);
                }
                assertThat(answer).as(context).doesNotContainPattern(INTERNAL);
                for (String card : cards) {
                    assertThat(answer).as(context).doesNotContain(card);
                }
                // An empty 4xx is tolerated only where no handler of ours runs (e.g. OPTIONS); never a bare 413.
                if (status >= 400
                        && (!answer.isEmpty() || status == 413)
                        && !attempt.method().equals("HEAD")) {
                    assertThat(r.contentType()).as(context).startsWith("application/problem+json");
                    assertThat(answer).as(context).containsPattern("\"code\":\"[a-z_]+\"");
                }
            }
            assertThat(fingerprint())
                    .as("database after %s, seed %s", endpoint.name(), SEED)
                    .isEqualTo(before);
            assertThat(logs.linesWithCardNumbers())
                    .as("card numbers in the log")
                    .isEmpty();
            assertThat(logs.linesContaining(List.of(TestSupport.KEY_A, TestSupport.KEY_B, TestSupport.ADMIN)))
                    .as("keys in the log")
                    .isEmpty();
            assertThat(logs.lines()).as("stack traces in the log").noneMatch(l -> l.contains("\tat "));
        }
        if (endpoint.kind() == Kind.WEBHOOK) {
            String event = webhookEvent();
            byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
            long now = Instant.now().getEpochSecond();
            io.restassured.RestAssured.given()
                    .contentType("application/json")
                    .header(PspWebhooks.SANDBOX_HEADER, PspWebhooks.sign(WEBHOOK_SECRET, now, bytes))
                    .body(bytes)
                    .post("/v1/psp/webhooks")
                    .then()
                    .statusCode(200);
            assertThat(TestSupport.paymentStatus(pool, webhookTarget))
                    .as("the same event correctly signed is accepted")
                    .isEqualTo("CAPTURED");
        }
    }

    /** A real {@code charge.succeeded} event about {@link #webhookTarget}, with a fresh event id. */
    private String webhookEvent() {
        return "{\"id\":\"evt_" + UUID.randomUUID() + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_abuse\","
                + "\"reference\":\"" + webhookTarget
                + "\",\"status\":\"succeeded\",\"amount\":4200,\"currency\":\"EUR\","
                + "\"created\":\"2026-01-01T00:00:00.000Z\"}}";
    }

    private Attempt webhookAttempt(Random random) {
        Map<String, String> headers = new LinkedHashMap<>();
        String body = random.nextBoolean() ? webhookEvent() : Hostile.draw(Hostile.BAD_CAPTURE_BODY);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();
        long off = 301 + random.nextInt(10 * 86_400); // beyond the 5 min tolerance
        String signature =
                switch (random.nextInt(7)) {
                    case 0 -> null; // unsigned
                    case 1 -> Hostile.draw(Hostile.BAD_AUTH); // garbage header
                    case 2 -> PspWebhooks.sign("whsec_not_the_secret", now, bytes);
                    case 3 -> PspWebhooks.sign(WEBHOOK_SECRET, now, (body + " ").getBytes(StandardCharsets.UTF_8));
                    case 4 -> PspWebhooks.sign(WEBHOOK_SECRET, now - off, bytes); // a replayed old delivery
                    case 5 -> PspWebhooks.sign(WEBHOOK_SECRET, now + off, bytes); // from the future
                    default -> null; // oversized, below
                };
        if (signature == null && random.nextBoolean()) {
            // Correctly signed, but over payments.webhooks.max-body-bytes (32 KiB) or the HTTP cap (64 KiB).
            String event = webhookEvent();
            body = event.substring(0, event.length() - 2) + ",\"pad\":\"" + "a".repeat(33_000 + random.nextInt(40_000))
                    + "\"}}";
            signature = PspWebhooks.sign(WEBHOOK_SECRET, now, body.getBytes(StandardCharsets.UTF_8));
        }
        if (signature != null) {
            headers.put(PspWebhooks.SANDBOX_HEADER, signature);
        }
        headers.put("Content-Type", random.nextInt(5) == 0 ? Hostile.draw(Hostile.CONTENT_TYPE) : "application/json");
        if (random.nextInt(4) == 0) {
            headers.put("Authorization", Hostile.draw(Hostile.BAD_AUTH)); // a key is no signature
        }
        if (random.nextInt(4) == 0) {
            headers.put("traceparent", Hostile.draw(Hostile.TRACEPARENT));
        }
        String method = random.nextInt(8) == 0 ? METHODS.get(random.nextInt(METHODS.size())) : "POST";
        return new Attempt(method, "/v1/psp/webhooks", headers, body);
    }

    private Attempt generate(Endpoint endpoint, Random random) {
        if (endpoint.kind() == Kind.WEBHOOK) {
            return webhookAttempt(random);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        boolean admin = endpoint.kind() == Kind.ADMIN_POST;
        String goodAuth = "Bearer " + (admin ? TestSupport.ADMIN : TestSupport.KEY_A);
        int authChoice = random.nextInt(10);
        boolean authenticated = authChoice < 6;
        if (authenticated) {
            headers.put("Authorization", goodAuth);
        } else if (authChoice < 9) {
            headers.put("Authorization", Hostile.draw(Hostile.BAD_AUTH));
        } else if (admin) {
            headers.put("Authorization", "Bearer " + TestSupport.KEY_A); // a merchant key is no operator token
        } // else: no Authorization at all

        String path = endpoint.path();
        if (path.contains("{id}")) {
            String segment = Hostile.draw(Hostile.BAD_SEGMENT);
            if (admin && segment.startsWith("00000000-0000-4000-8000-0000000000")) {
                segment = "%00" + segment; // never the demo merchants: a rotation would revoke their keys
            }
            path = path.replace("{id}", segment);
        }
        if (path.contains("{q}")) {
            String q = random.nextInt(4) == 0
                    ? "true"
                    : Hostile.encode(Hostile.draw(Arbitraries.oneOf(Hostile.BAD_STRING, Hostile.UNICODE)));
            path = path.replace("{q}", q);
            if (random.nextInt(5) == 0) {
                path = path + "&" + path.substring(path.indexOf('?') + 1); // the parameter twice
            }
            if (random.nextInt(8) == 0) {
                path = path.substring(0, path.indexOf('?')); // no parameter at all
            }
        }
        String method = random.nextInt(8) == 0 ? METHODS.get(random.nextInt(METHODS.size())) : endpoint.method();
        String body = null;
        if (endpoint.kind() != Kind.MERCHANT_GET) {
            body = endpoint.badBody() != null
                    ? Hostile.draw(endpoint.badBody())
                    : random.nextBoolean() ? Hostile.draw(Hostile.BAD_CAPTURE_BODY) : null;
            if (random.nextInt(6) != 0) {
                headers.put("Content-Type", Hostile.draw(Hostile.CONTENT_TYPE));
            }
        }
        if (endpoint.kind() == Kind.MERCHANT_POST && random.nextInt(8) != 0) {
            headers.put("Idempotency-Key", Hostile.draw(Hostile.IDEMPOTENCY_KEY));
        }
        if (random.nextInt(4) == 0) {
            headers.put("Accept", Hostile.draw(Hostile.ACCEPT));
        }
        if (random.nextInt(4) == 0) {
            headers.put("traceparent", Hostile.draw(Hostile.TRACEPARENT));
        }
        if (random.nextInt(6) == 0) {
            headers.put("X-Forwarded-For", Hostile.draw(Hostile.BAD_AUTH));
        }
        if (!authenticated
                && endpoint.kind() == Kind.ADMIN_POST
                && endpoint.badBody() != null
                && random.nextBoolean()) {
            body = "{\"name\":\"never created\"}"; // a valid body behind a wrong token must not create anything
        }
        if (!authenticated && endpoint.kind() == Kind.MERCHANT_POST && random.nextBoolean()) {
            body = Hostile.captureBody("amount", "1000"); // a valid body behind a wrong key must not capture
        }
        return new Attempt(method, path, headers, body);
    }

    private RawHttp.Answer send(Attempt attempt) {
        Map<String, String> headers = new LinkedHashMap<>();
        attempt.headers().forEach((name, value) -> headers.put(name, headerSafe(value)));
        byte[] body = attempt.body() == null ? null : attempt.body().getBytes(StandardCharsets.UTF_8);
        return RawHttp.send(io.restassured.RestAssured.port, attempt.method(), attempt.path(), headers, body);
    }

    /** CR/LF would split the request (header injection is the HTTP layer's concern, not the API's); the rest stays. */
    private static String headerSafe(String value) {
        StringBuilder sb = new StringBuilder();
        for (char c : value.toCharArray()) {
            sb.append(c == '\r' || c == '\n' || c > 0xff ? '?' : c);
        }
        return sb.toString();
    }

    /** Row count and a digest of every row of every table: detects inserts, updates and deletes. */
    private Map<String, String> fingerprint() {
        Map<String, String> result = new LinkedHashMap<>();
        for (String table : TestSupport.TABLES) {
            String digest = pool.query(
                            "SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '')"
                                    + " FROM " + table + " t")
                    .execute()
                    .await()
                    .indefinitely()
                    .iterator()
                    .next()
                    .getString(0);
            result.put(table, digest);
        }
        return result;
    }
}
