package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad input gets a clear 4xx problem and changes nothing (docs/architecture.md §7.6); card numbers are never echoed or logged. */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class ValidationTest {
    private static final String VALID = body("order-1", 1000, "EUR", "tok_visa");
    private static final List<String> CARDS = List.of(
            "4242424242424242", "4242 4242 4242 4242", "4242-4242-4242-4242", "5555555555554444", "378282246310005");

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

    record Case(String name, int status, String code, Supplier<Response> call) {}

    static Case post(String name, int status, String code, String json) {
        return new Case(name, status, code, () -> TestSupport.capture(KEY_A, "key-" + name, json));
    }

    static Case raw(String name, int status, String code, Supplier<Response> call) {
        return new Case(name, status, code, call);
    }

    static RequestSpecification json() {
        return given().header("Authorization", "Bearer " + KEY_A).contentType("application/json");
    }

    static String with(String field, String rawValue) {
        Map<String, String> fields = new java.util.LinkedHashMap<>(
                Map.of("orderId", "\"order-1\"", "amount", "1000", "currency", "\"EUR\"", "source", "\"tok_visa\""));
        if (rawValue == null) {
            fields.remove(field);
        } else {
            fields.put(field, rawValue);
        }
        StringBuilder sb = new StringBuilder("{");
        fields.forEach((k, v) -> sb.append(sb.length() > 1 ? "," : "")
                .append('"')
                .append(k)
                .append("\":")
                .append(v));
        return sb.append('}').toString();
    }

    static List<Case> cases() {
        List<Case> cases = new ArrayList<>();
        // Idempotency-Key
        cases.add(raw("missing-key", 400, "missing_idempotency_key", () -> json().body(VALID)
                .post("/v1/payments")));
        cases.add(raw("empty-key", 400, "missing_idempotency_key", () -> json().header("Idempotency-Key", "")
                .body(VALID)
                .post("/v1/payments")));
        cases.add(raw(
                "overlong-key", 400, "invalid_idempotency_key", () -> json().header("Idempotency-Key", "k".repeat(256))
                        .body(VALID)
                        .post("/v1/payments")));
        cases.add(raw("latin1-key", 400, "invalid_idempotency_key", () -> json().header("Idempotency-Key", "clé")
                .body(VALID)
                .post("/v1/payments")));
        cases.add(raw("tab-key", 400, "invalid_idempotency_key", () -> json().header("Idempotency-Key", "a\tb")
                .body(VALID)
                .post("/v1/payments")));
        // Authentication
        cases.add(raw("no-auth", 401, "unauthorized", () -> given().contentType("application/json")
                .header("Idempotency-Key", "k1")
                .body(VALID)
                .post("/v1/payments")));
        cases.add(raw("wrong-key", 401, "unauthorized", () -> given().header("Authorization", "Bearer sk_nope")
                .contentType("application/json")
                .header("Idempotency-Key", "k2")
                .body(VALID)
                .post("/v1/payments")));
        cases.add(raw("basic-auth", 401, "unauthorized", () -> given().header("Authorization", "Basic " + KEY_A)
                .contentType("application/json")
                .header("Idempotency-Key", "k3")
                .body(VALID)
                .post("/v1/payments")));
        // Body shape
        cases.add(raw(
                "text-plain", 415, "unsupported_media_type", () -> given().header("Authorization", "Bearer " + KEY_A)
                        .header("Idempotency-Key", "k4")
                        .contentType("text/plain")
                        .body(VALID)
                        .post("/v1/payments")));
        cases.add(raw("empty-body", 400, "invalid_json", () -> json().header("Idempotency-Key", "k5")
                .post("/v1/payments")));
        cases.add(post("not-json", 400, "invalid_json", "orderId=1&amount=2"));
        cases.add(post("array", 400, "invalid_json", "[]"));
        cases.add(post("null", 400, "invalid_json", "null"));
        cases.add(post("truncated", 400, "invalid_json", "{\"orderId\":\"o\",\"amount\":"));
        cases.add(post(
                "duplicate-field",
                400,
                "invalid_json",
                "{\"orderId\":\"o\",\"amount\":1,\"amount\":2,\"currency\":\"EUR\",\"source\":\"tok_visa\"}"));
        cases.add(post("trailing-data", 400, "invalid_json", VALID + " {}"));
        cases.add(post("comment", 400, "invalid_json", "/* x */" + VALID));
        cases.add(post("unknown-card-field", 400, "unknown_field", with("card", "\"4242424242424242\"")));
        cases.add(post("unknown-field", 400, "unknown_field", with("amount2", "5")));
        cases.add(post("card-named-field", 400, "unknown_field", with("4242424242424242", "5")));
        cases.add(post("too-large", 400, "body_too_large", with("orderId", "\"" + "x".repeat(17_000) + "\"")));
        // orderId
        cases.add(post("missing-order", 400, "invalid_order_id", with("orderId", null)));
        cases.add(post("empty-order", 400, "invalid_order_id", with("orderId", "\"\"")));
        cases.add(post("overlong-order", 400, "invalid_order_id", with("orderId", "\"" + "o".repeat(256) + "\"")));
        cases.add(post("unicode-order", 400, "invalid_order_id", with("orderId", "\"ordér-ünïcode-😀\"")));
        cases.add(post("newline-order", 400, "invalid_order_id", with("orderId", "\"a\\nb\"")));
        cases.add(post("numeric-order", 400, "invalid_order_id", with("orderId", "123")));
        // a card number anywhere in orderId (it is stored and published on Kafka): refused like one in source
        for (int i = 0; i < CARDS.size(); i++) {
            cases.add(post("card-order-" + i, 400, "card_data_rejected", with("orderId", "\"" + CARDS.get(i) + "\"")));
            cases.add(post(
                    "card-in-order-" + i,
                    400,
                    "card_data_rejected",
                    with("orderId", "\"INV-12-" + CARDS.get(i) + "/x\"")));
        }
        // amount
        cases.add(post("missing-amount", 400, "invalid_amount", with("amount", null)));
        cases.add(post("zero", 400, "invalid_amount", with("amount", "0")));
        cases.add(post("negative", 400, "invalid_amount", with("amount", "-100")));
        cases.add(post("over-max", 400, "invalid_amount", with("amount", "1000000000001")));
        cases.add(post("huge", 400, "invalid_amount", with("amount", "99999999999999999999999999")));
        cases.add(post("fraction", 400, "invalid_amount", with("amount", "1.5")));
        cases.add(post("exponent", 400, "invalid_amount", with("amount", "1e3")));
        cases.add(post("point-zero", 400, "invalid_amount", with("amount", "100.0")));
        cases.add(post("string-amount", 400, "invalid_amount", with("amount", "\"100\"")));
        cases.add(post("null-amount", 400, "invalid_amount", with("amount", "null")));
        cases.add(post("bool-amount", 400, "invalid_amount", with("amount", "true")));
        cases.add(post("object-amount", 400, "invalid_amount", with("amount", "{\"value\":1}")));
        cases.add(post("array-amount", 400, "invalid_amount", with("amount", "[1]")));
        cases.add(post("sql-amount", 400, "invalid_json", with("amount", "100; DROP TABLE payments")));
        // currency
        cases.add(post("missing-currency", 400, "invalid_currency", with("currency", null)));
        cases.add(post("lowercase-currency", 400, "invalid_currency", with("currency", "\"eur\"")));
        cases.add(post("unknown-currency", 400, "invalid_currency", with("currency", "\"ABC\"")));
        cases.add(post("no-minor-unit", 400, "invalid_currency", with("currency", "\"XXX\"")));
        cases.add(post("long-currency", 400, "invalid_currency", with("currency", "\"EURO\"")));
        cases.add(post("numeric-currency", 400, "invalid_currency", with("currency", "978")));
        cases.add(post("sql-currency", 400, "invalid_currency", with("currency", "\"EUR' OR '1'='1\"")));
        // source
        cases.add(post("missing-source", 400, "invalid_source", with("source", null)));
        for (int i = 0; i < CARDS.size(); i++) {
            cases.add(post("card-" + i, 400, "card_data_rejected", with("source", "\"" + CARDS.get(i) + "\"")));
        }
        cases.add(post("card-in-token", 400, "card_data_rejected", with("source", "\"tok_4242424242424242\"")));
        cases.add(post("card-as-number", 400, "invalid_source", with("source", "4242424242424242")));
        cases.add(post("not-a-token", 400, "invalid_source", with("source", "\"visa\"")));
        cases.add(post("overlong-token", 400, "invalid_source", with("source", "\"tok_" + "a".repeat(200) + "\"")));
        cases.add(post("sql-source", 400, "invalid_source", with("source", "\"tok_visa'; DROP TABLE payments;--\"")));
        cases.add(post("emoji-source", 400, "invalid_source", with("source", "\"tok_😀\"")));
        // metadata (optional): at most 20 keys of 1-40 characters, string values of at most 500, no control characters
        StringBuilder manyKeys = new StringBuilder("{");
        for (int i = 0; i < 21; i++) {
            manyKeys.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
        }
        cases.add(post("metadata-21-keys", 400, "invalid_metadata", with("metadata", manyKeys + "}")));
        cases.add(post("metadata-string", 400, "invalid_metadata", with("metadata", "\"k=v\"")));
        cases.add(post("metadata-array", 400, "invalid_metadata", with("metadata", "[\"v\"]")));
        cases.add(post("metadata-number-value", 400, "invalid_metadata", with("metadata", "{\"k\":1}")));
        cases.add(post("metadata-null-value", 400, "invalid_metadata", with("metadata", "{\"k\":null}")));
        cases.add(post("metadata-nested", 400, "invalid_metadata", with("metadata", "{\"k\":{\"a\":\"b\"}}")));
        cases.add(post("metadata-empty-key", 400, "invalid_metadata", with("metadata", "{\"\":\"v\"}")));
        cases.add(post(
                "metadata-long-key", 400, "invalid_metadata", with("metadata", "{\"" + "k".repeat(41) + "\":\"v\"}")));
        cases.add(post(
                "metadata-long-value",
                400,
                "invalid_metadata",
                with("metadata", "{\"k\":\"" + "v".repeat(501) + "\"}")));
        cases.add(post("metadata-nul", 400, "invalid_metadata", with("metadata", "{\"k\":\"a\\u0000b\"}")));
        cases.add(post("metadata-newline-key", 400, "invalid_metadata", with("metadata", "{\"a\\nb\":\"v\"}")));
        cases.add(post("metadata-duplicate-key", 400, "invalid_json", with("metadata", "{\"k\":\"a\",\"k\":\"b\"}")));
        for (int i = 0; i < CARDS.size(); i++) {
            cases.add(post(
                    "card-metadata-value-" + i,
                    400,
                    "card_data_rejected",
                    with("metadata", "{\"note\":\"card " + CARDS.get(i) + "\"}")));
            cases.add(post(
                    "card-metadata-key-" + i,
                    400,
                    "card_data_rejected",
                    with("metadata", "{\"" + CARDS.get(i) + "\":\"v\"}")));
        }
        return cases;
    }

    @Test
    void malformedRequestsGetA4xxProblemAndChangeNothing() {
        List<String> logged = new ArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                synchronized (logged) {
                    logged.add(String.valueOf(record.getMessage()) + " "
                            + java.util.Arrays.toString(record.getParameters()));
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger root = Logger.getLogger("");
        root.addHandler(handler);
        try {
            Map<String, Long> before = TestSupport.rowCounts(pool);
            List<Case> cases = cases();
            assertThat(cases).hasSizeGreaterThanOrEqualTo(40);
            for (Case c : cases) {
                Response r = c.call().get();
                assertThat(r.statusCode()).as(c.name()).isEqualTo(c.status());
                assertThat(r.contentType()).as(c.name()).startsWith("application/problem+json");
                assertThat(r.<String>path("code")).as(c.name()).isEqualTo(c.code());
                assertThat(r.<Integer>path("status")).as(c.name()).isEqualTo(c.status());
                assertThat(r.<String>path("type")).as(c.name()).isNotBlank();
                assertThat(r.<String>path("title")).as(c.name()).isNotBlank();
                for (String card : CARDS) {
                    assertThat(r.asString()).as(c.name()).doesNotContain(card);
                }
            }
            assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
            synchronized (logged) {
                for (String card : CARDS) {
                    assertThat(logged).noneMatch(line -> line.contains(card));
                }
            }
        } finally {
            root.removeHandler(handler);
        }
    }

    /**
     * A card number in any text a merchant (or an operator) sends is refused with 400 {@code card_data_rejected}, and
     * nothing is stored, published or logged: a refund's reason, the orderId query, a merchant's name, an operations
     * note. Each refused request would succeed without the card number (the controls), so the refusals are not
     * vacuous; numbers that are no card (Luhn-invalid, or part of a longer digit string) stay accepted.
     */
    @Test
    void cardNumbersAreRefusedInEveryTextField() {
        Response captured = TestSupport.capture(
                KEY_A, TestSupport.unique("card"), body(TestSupport.unique("order-card"), 5000, "EUR", "tok_visa"));
        assertThat(captured.statusCode()).isEqualTo(201);
        String paymentId = captured.path("id");
        java.util.UUID itemPayment = Fixtures.insertPayment(pool, "UNKNOWN", 100, "tok_visa");
        Fixtures.openDeadlineItem(pool, itemPayment);
        long itemId = TestSupport.count(
                pool, "SELECT id FROM operations_queue WHERE subject_id = $1", itemPayment.toString());
        Map<String, Long> before = TestSupport.rowCounts(pool);
        List<String> texts = new ArrayList<>();
        for (String card : CARDS) {
            texts.add(card);
            texts.add("customer card " + card + ", refunded by phone");
            texts.add("ref 12-" + card);
        }
        List<String> failures = new ArrayList<>();
        try (LogCapture logs = new LogCapture()) {
            for (String text : texts) {
                String value = io.vertx.core.json.Json.encode(text);
                Map<String, Supplier<Response>> calls = Map.of(
                        "refund reason",
                        () -> json().header("Idempotency-Key", TestSupport.unique("card"))
                                .body("{\"amount\":100,\"reason\":" + value + "}")
                                .post("/v1/payments/" + paymentId + "/refunds"),
                        "orderId query",
                        () -> TestSupport.merchant(KEY_A)
                                .queryParam("orderId", text)
                                .get("/v1/payments"),
                        "merchant name",
                        () -> admin().body("{\"name\":" + value + "}").post("/v1/admin/merchants"),
                        "operations note",
                        () -> admin().body("{\"resolution\":" + value + "}")
                                .post("/v1/admin/operations/" + itemId + "/resolve"));
                calls.forEach((name, call) -> {
                    Response r = call.get();
                    if (r.statusCode() != 400
                            || !String.valueOf(r.contentType()).startsWith("application/problem+json")
                            || !"card_data_rejected".equals(r.path("code"))
                            || r.asString().contains(text)) {
                        failures.add(name + " [" + text + "]: " + r.statusCode() + " " + r.asString());
                    }
                });
            }
            assertThat(failures).isEmpty();
            assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
            assertThat(logs.linesWithCardNumbers()).isEmpty();
        }

        // Not card numbers: a Luhn-invalid 16 digits, 20 digits in one piece, a date and a number, a UUID whose
        // dash-separated digits (4610-2179-4522-9685-8) would pass as one. All accepted.
        for (String text : List.of(
                "4242424242424241",
                "12345678901234567890",
                "2026-12-01 order 42",
                "d1be4610-2179-4522-9685-8aaac0d3a14c")) {
            String value = io.vertx.core.json.Json.encode(text);
            assertThat(json().header("Idempotency-Key", TestSupport.unique("card"))
                            .body("{\"amount\":100,\"reason\":" + value + "}")
                            .post("/v1/payments/" + paymentId + "/refunds")
                            .statusCode())
                    .as(text)
                    .isEqualTo(202);
            assertThat(TestSupport.capture(KEY_A, TestSupport.unique("card"), with("orderId", value))
                            .statusCode())
                    .as(text)
                    .isEqualTo(201);
            assertThat(TestSupport.merchant(KEY_A)
                            .queryParam("orderId", text)
                            .get("/v1/payments")
                            .statusCode())
                    .as(text)
                    .isEqualTo(200);
        }
        assertThat(admin().body("{\"resolution\":\"checked 4242424242424241 with the PSP\"}")
                        .post("/v1/admin/operations/" + itemId + "/resolve")
                        .statusCode())
                .isEqualTo(200);
    }

    static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + TestSupport.ADMIN).contentType("application/json");
    }

    /** A chunked body has no Content-Length to refuse it by: it is capped while read, with the same answers. */
    @Test
    void chunkedBodiesAreCappedLikeAnnouncedOnes() {
        Map<String, Long> before = TestSupport.rowCounts(pool);
        RawHttp.Answer huge = chunkedCapture("chunked-huge", with("orderId", "\"" + "x".repeat(70_000) + "\""));
        assertThat(huge.status()).isEqualTo(413);
        assertThat(huge.contentType()).startsWith("application/problem+json");
        assertThat(huge.body()).contains("\"code\":\"body_too_large\"");
        RawHttp.Answer large = chunkedCapture("chunked-large", with("orderId", "\"" + "x".repeat(17_000) + "\""));
        assertThat(large.status()).isEqualTo(400);
        assertThat(large.body()).contains("\"code\":\"body_too_large\"");
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);

        RawHttp.Answer valid = chunkedCapture("chunked-valid", body("order-chunked", 1234, "EUR", "tok_visa"));
        assertThat(valid.status()).as(valid.body()).isEqualTo(201);
        assertThat(valid.body()).contains("\"orderId\":\"order-chunked\"", "\"amount\":1234");
    }

    private static RawHttp.Answer chunkedCapture(String key, String json) {
        return RawHttp.sendChunked(
                io.restassured.RestAssured.port,
                "POST",
                "/v1/payments",
                Map.of(
                        "Authorization", "Bearer " + KEY_A,
                        "Content-Type", "application/json",
                        "Idempotency-Key", "key-" + key + "-" + java.util.UUID.randomUUID()),
                json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
}
