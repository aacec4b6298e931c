package com.payments.api;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * Generators of hostile request parts, built with jqwik's {@link Arbitraries} API and drawn from jqwik's seeded
 * source of randomness (jqwik's engine cannot run {@code @QuarkusTest} classes, so the properties run as plain JUnit tests
 * and a failure prints the seed and the request). Every generated body is invalid by construction, so a 2xx answer
 * to a POST is a failure, not bad luck.
 */
final class Hostile {
    /** Characters that make any field of the merchant API invalid (none is printable ASCII). */
    static final Arbitrary<String> POISON = Arbitraries.of(
            "\u0000", "\u0007", "\n", "\r", "\t", "\u007f", "é", "\u0085", "\u00a0", "\u200b", "\u202e", "\ufeff", "😀",
            "\ud800", "𝔘", "Ω", "İ", "ß");

    static final Arbitrary<String> UNICODE =
            Arbitraries.strings().all().ofMinLength(0).ofMaxLength(40);

    /** Strings that are invalid in any field: poison inserted somewhere, or empty, or far too long. */
    static final Arbitrary<String> BAD_STRING = Arbitraries.oneOf(
            Combinators.combine(UNICODE, POISON, UNICODE).as((a, p, b) -> a + p + b),
            Arbitraries.just(""),
            Arbitraries.strings().ascii().ofMinLength(256).ofMaxLength(3000),
            Arbitraries.of(
                            "' OR '1'='1",
                            "'; DROP TABLE payments;--",
                            "${jndi:ldap://x/a}",
                            "<script>alert(1)</script>",
                            "%s%s%n%x",
                            "{{7*7}}",
                            "../../etc/passwd",
                            "\\u0000")
                    .map(s -> s + "\u0000"));

    /** Luhn-valid card numbers of 13–19 digits, with or without separators. */
    static final Arbitrary<String> CARD = Combinators.combine(
                    Arbitraries.strings().numeric().ofMinLength(12).ofMaxLength(18), Arbitraries.of("", " ", "-"))
            .as((digits, sep) -> group(withLuhnDigit(digits), sep));

    /**
     * A card number inside printable text without digits or hex letters, so nothing can join the card's digits into
     * a longer number or make it part of a UUID (which CardNumbers skips): the text always contains a card number,
     * and a body that carries it is never valid by accident.
     */
    static final Arbitrary<String> CARD_IN_TEXT = Combinators.combine(textWithoutDigits(), CARD, textWithoutDigits())
            .as((before, card, after) -> before + card + after);

    /** JSON amounts that are never valid: out of range, fractions, exponents, strings, structures, not-JSON. */
    static final Arbitrary<String> BAD_AMOUNT = Arbitraries.oneOf(
            Arbitraries.bigIntegers()
                    .between(new java.math.BigInteger("-99999999999999999999999999"), java.math.BigInteger.ZERO)
                    .map(Object::toString),
            Arbitraries.bigIntegers()
                    .between(
                            java.math.BigInteger.valueOf(1_000_000_000_001L),
                            new java.math.BigInteger("999999999999999999999999999999999999"))
                    .map(Object::toString),
            Arbitraries.longs().between(1, 1_000_000_000_000L).map(l -> l + ".0"),
            Arbitraries.longs().between(1, 1_000_000).map(l -> l + "e2"),
            Arbitraries.doubles().map(d -> Double.toString(d) + "1"),
            Arbitraries.longs().between(1, 1_000_000_000_000L).map(l -> "\"" + l + "\""),
            Arbitraries.of(
                    "NaN",
                    "Infinity",
                    "-Infinity",
                    "-0",
                    "0x10",
                    "+5",
                    "01",
                    "1_000",
                    "null",
                    "true",
                    "[]",
                    "{}",
                    "[100]",
                    "{\"value\":100}",
                    "9223372036854775808",
                    "-9223372036854775809",
                    "1e400",
                    "0.0000001"));

    /** Any JSON value, hostile. */
    static final Arbitrary<String> BAD_VALUE =
            Arbitraries.oneOf(BAD_AMOUNT, BAD_STRING.map(Hostile::json), CARD.map(Hostile::json), CARD);

    /** Invalid for orderId (which takes printable ASCII without a card number in it). */
    static final Arbitrary<String> BAD_ORDER_ID = Arbitraries.oneOf(
            BAD_STRING.map(Hostile::json),
            BAD_AMOUNT.filter(v -> !v.startsWith("\"")),
            CARD_IN_TEXT.map(Hostile::json));

    static final List<String> FIELDS = List.of("orderId", "amount", "currency", "source");

    /** A request body for POST /v1/payments that is invalid by construction. */
    static final Arbitrary<String> BAD_CAPTURE_BODY = Arbitraries.oneOf(
            // one field hostile
            Combinators.combine(Arbitraries.of(FIELDS), BAD_VALUE, BAD_ORDER_ID)
                    .as((f, v, order) -> captureBody(f, f.equals("orderId") ? order : v)),
            // a card number as source (Luhn valid, must be refused before anything else), or inside the orderId
            CARD.map(card -> captureBody("source", json(card))),
            CARD_IN_TEXT.map(text -> captureBody("orderId", json(text))),
            // a field missing, an unknown field (a card field among them), a duplicate field
            Arbitraries.of(FIELDS).map(f -> captureBody(f, null)),
            Combinators.combine(Arbitraries.of("card", "pan", "amount2", "merchantId", "status", "__proto__"), CARD)
                    .as((f, card) ->
                            captureBody("orderId", "\"o-1\"").replaceFirst("\\}$", ",\"" + f + "\":\"" + card + "\"}")),
            Arbitraries.of(FIELDS)
                    .map(f -> captureBody("orderId", "\"o-1\"").replaceFirst("\\}$", ",\"" + f + "\":\"x\"}")),
            // not an object, not JSON, truncated, deep nesting, huge
            Arbitraries.of("", " ", "null", "[]", "\"x\"", "1", "{", "}", "{\"orderId\":", "{'orderId':'o'}", "<xml/>")
                    .map(s -> s),
            Arbitraries.integers().between(1, 5).map(i -> captureBody("amount", "1000")
                    .substring(0, i * 10)),
            Arbitraries.integers().between(500, 5000).map(n -> "[".repeat(n) + "]".repeat(n)),
            Arbitraries.integers()
                    .between(500, 5000)
                    .map(n -> captureBody("orderId", "{\"a\":".repeat(n) + "1" + "}".repeat(n))),
            Arbitraries.integers().between(17, 70).map(k -> captureBody("orderId", json("o".repeat(k * 1024)))),
            UNICODE.map(s -> s),
            Arbitraries.bytes().array(byte[].class).ofMaxSize(200).map(b -> new String(b, StandardCharsets.ISO_8859_1)),
            captureBodyValid().map(b -> b + " {}"),
            captureBodyValid().map(b -> "\ufeff" + b + "\u0000"));

    /** Bodies for POST /v1/admin/merchants that are invalid by construction. */
    static final Arbitrary<String> BAD_ADMIN_BODY = Arbitraries.oneOf(
            BAD_AMOUNT.filter(v -> !v.startsWith("\"")).map(v -> "{\"name\":" + v + "}"),
            Arbitraries.integers().between(0, 300).map(n -> "{\"name\":\"" + " ".repeat(n) + "\"}"),
            Arbitraries.strings().all().ofMinLength(201).ofMaxLength(2000).map(n -> "{\"name\":" + json(n) + "}"),
            // An explicit null is the optional field left out (the default rate), so it is no bad rate.
            BAD_AMOUNT.filter(v -> !v.equals("null")).map(v -> "{\"name\":\"m\",\"rateLimitPerSecond\":" + v + "}"),
            Arbitraries.of("", "null", "[]", "{}", "{\"name\":\"m\",\"x\":1}", "{\"name\":\"m\"", "{\"name\":null}"),
            // a card number in a merchant's name or an operations note (the resolve endpoint takes this generator too)
            CARD_IN_TEXT.map(text -> "{\"name\":" + json(text) + "}"),
            CARD_IN_TEXT.map(text -> "{\"resolution\":" + json(text) + "}"),
            UNICODE);

    /** Refund bodies that must all be refused: bad amounts, bad reasons, unknown fields, card data, not JSON. */
    static final Arbitrary<String> BAD_REFUND_BODY = Arbitraries.oneOf(
            BAD_AMOUNT.map(v -> "{\"amount\":" + v + "}"),
            Arbitraries.strings()
                    .all()
                    .ofMinLength(501)
                    .ofMaxLength(2000)
                    .map(r -> "{\"amount\":1,\"reason\":" + json(r) + "}"),
            CARD.map(card -> "{\"amount\":1,\"card\":" + json(card) + "}"),
            CARD_IN_TEXT.map(text -> "{\"amount\":1,\"reason\":" + json(text) + "}"),
            Arbitraries.of("", "null", "[]", "{}", "{\"amount\":1", "{\"amount\":null}", "{\"amount\":1,\"amount\":2}"),
            UNICODE);

    /** Path segments: hostile strings, percent-encoded so the request line stays valid, and raw nasties. */
    static final Arbitrary<String> BAD_SEGMENT = Arbitraries.oneOf(
            Arbitraries.oneOf(BAD_STRING, UNICODE, CARD).map(Hostile::encode),
            Arbitraries.strings().ascii().ofMinLength(1000).ofMaxLength(6000).map(Hostile::encode),
            Arbitraries.create(() -> java.util.UUID.randomUUID().toString()),
            Arbitraries.of(
                    "%00",
                    "%2e%2e%2f%2e%2e%2f",
                    "..%2f..%2fadmin",
                    "%ff%fe",
                    "%c0%ae%c0%ae",
                    "%u0000",
                    "%",
                    "%zz",
                    "00000000-0000-0000-0000-000000000000",
                    "00000000-0000-4000-8000-00000000000a",
                    "ffffffff-ffff-ffff-ffff-ffffffffffff",
                    "null",
                    "undefined",
                    "-1",
                    "0",
                    "1;DROP TABLE payments",
                    "%27%20OR%20%271%27%3D%271",
                    "%0d%0aSet-Cookie:%20x=1"));

    /** Values for the Authorization header that must never authenticate. */
    static final Arbitrary<String> BAD_AUTH = Arbitraries.oneOf(
            Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(100),
            Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(100).map(s -> "Bearer " + s),
            Arbitraries.strings().withCharRange(' ', 'ÿ').ofMaxLength(60).map(s -> "Bearer " + s),
            Arbitraries.of(
                    "",
                    "Bearer",
                    "Bearer ",
                    "Bearer  ",
                    "Basic c2tfdGVzdDp4",
                    "Bearer sk_test_demo_merchant_",
                    "Bearer sk_test_demo_merchant_aa",
                    "Bearer SK_TEST_DEMO_MERCHANT_A",
                    "Bearer %00",
                    "Bearer sk_test_demo_merchant_a sk_test_demo_merchant_b",
                    "Bearer\tsk_test_demo_merchant_a",
                    "Bearer " + "k".repeat(4000),
                    "Token sk_test_demo_merchant_a",
                    "sk_test_demo_merchant_a"));

    /** Idempotency keys: valid ones, hostile ones. */
    static final Arbitrary<String> IDEMPOTENCY_KEY = Arbitraries.oneOf(
            Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(255),
            Arbitraries.strings().withCharRange(' ', 'ÿ').ofMaxLength(300),
            Arbitraries.strings().ascii().ofMinLength(256).ofMaxLength(2000),
            CARD);

    static final Arbitrary<String> CONTENT_TYPE = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(6, Arbitraries.just("application/json")),
            net.jqwik.api.Tuple.of(
                    1,
                    Arbitraries.of(
                            "application/json; charset=ISO-8859-1",
                            "application/json; charset=utf-16",
                            "application/problem+json",
                            "text/plain",
                            "application/x-www-form-urlencoded",
                            "multipart/form-data; boundary=x",
                            "application/xml",
                            "*/*",
                            "application/json;;;",
                            "application/JSON",
                            "garbage")),
            net.jqwik.api.Tuple.of(
                    1, Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(80)));

    static final Arbitrary<String> ACCEPT = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(6, Arbitraries.just("*/*")),
            net.jqwik.api.Tuple.of(
                    1, Arbitraries.of("application/xml", "text/html", "image/png", "application/json;q=0", "garbage")));

    static final Arbitrary<String> TRACEPARENT = Arbitraries.oneOf(
            Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(200),
            Arbitraries.of(
                    "00-00000000000000000000000000000000-0000000000000000-01",
                    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));

    private Hostile() {}

    /**
     * Seeds jqwik's source of randomness for this thread: {@link Arbitrary#sample()} draws from it (and runs the
     * generator inside a jqwik context, which a bare {@code generator(..).next(random)} outside the engine lacks).
     */
    static void seed(long seed) {
        net.jqwik.engine.SourceOfRandomness.create(Long.toString(seed));
    }

    static <T> T draw(Arbitrary<T> arbitrary) {
        return arbitrary.sample();
    }

    static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A valid capture body with one field replaced by a raw JSON value, or removed when the value is null. */
    static String captureBody(String field, String rawValue) {
        StringBuilder sb = new StringBuilder("{");
        String[][] fields = {
            {"orderId", "\"order-abuse\""}, {"amount", "1000"}, {"currency", "\"EUR\""}, {"source", "\"tok_visa\""}
        };
        for (String[] f : fields) {
            String value = f[0].equals(field) ? rawValue : f[1];
            if (value == null) {
                continue;
            }
            sb.append(sb.length() > 1 ? "," : "")
                    .append('"')
                    .append(f[0])
                    .append("\":")
                    .append(value);
        }
        return sb.append('}').toString();
    }

    private static Arbitrary<String> captureBodyValid() {
        return Arbitraries.just(captureBody("amount", "1000"));
    }

    private static Arbitrary<String> textWithoutDigits() {
        return Arbitraries.strings()
                .withCharRange(' ', '~')
                .excludeChars("0123456789abcdefABCDEF".toCharArray())
                .ofMaxLength(40);
    }

    static String withLuhnDigit(String digits) {
        for (int d = 0; d <= 9; d++) {
            if (LogCapture.luhn(digits + d)) {
                return digits + d;
            }
        }
        throw new IllegalStateException();
    }

    private static String group(String digits, String sep) {
        if (sep.isEmpty()) {
            return digits;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < digits.length(); i++) {
            if (i > 0 && i % 4 == 0) {
                sb.append(sep);
            }
            sb.append(digits.charAt(i));
        }
        return sb.toString();
    }
}
