package com.payments.sandbox.stripe;

import com.payments.sandbox.Reply;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The parameters of a Stripe request, form-encoded in the body of a POST or in the query string of a GET, with
 * Stripe's bracket names kept flat ({@code metadata[payment_id]}, {@code expand[]}).
 */
public final class StripeParams {

    private final Map<String, List<String>> values;

    private StripeParams(Map<String, List<String>> values) {
        this.values = values;
    }

    /** Parses {@code a=1&b%5Bc%5D=2} ('+' is a space); an empty or null text gives no parameters. */
    public static StripeParams parse(String encoded) {
        if (encoded == null || encoded.isEmpty()) {
            return new StripeParams(Map.of());
        }
        QueryStringDecoder decoder = new QueryStringDecoder(encoded, StandardCharsets.UTF_8, false, 1024);
        return new StripeParams(new LinkedHashMap<>(decoder.parameters()));
    }

    /** The first value of {@code name}, or null. */
    public String get(String name) {
        List<String> list = values.get(name);
        return list == null || list.isEmpty() ? null : list.get(0);
    }

    public List<String> all(String name) {
        return values.getOrDefault(name, List.of());
    }

    public Iterable<String> names() {
        return values.keySet();
    }

    /** {@code metadata[k]=v} pairs, in the order sent. */
    public Map<String, String> metadata() {
        Map<String, String> metadata = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : values.entrySet()) {
            String name = e.getKey();
            if (name.startsWith("metadata[")
                    && name.endsWith("]")
                    && !e.getValue().isEmpty()) {
                metadata.put(name.substring(9, name.length() - 1), e.getValue().get(0));
            }
        }
        return metadata;
    }

    /**
     * What Stripe's idempotency layer compares: the endpoint and every parameter, independent of their order. {@code
     * expand[]} only shapes the answer, but Stripe compares it too.
     */
    public String fingerprint(String endpoint) {
        TreeMap<String, List<String>> sorted = new TreeMap<>();
        for (Map.Entry<String, List<String>> e : values.entrySet()) {
            List<String> copy = new ArrayList<>(e.getValue());
            Collections.sort(copy);
            sorted.put(e.getKey(), copy);
        }
        return endpoint + '|' + sorted;
    }

    /** The most a Stripe amount may be, in minor units. */
    static final long MAX_AMOUNT = 99_999_999L;

    /** The error of an {@code amount} parameter out of 1..{@link #MAX_AMOUNT}; null when fine or absent but optional. */
    static Reply amountError(String text, boolean required) {
        if (text == null) {
            return required
                    ? StripeErrors.invalid("parameter_missing", "Missing required param: amount.", "amount")
                    : null;
        }
        long value;
        try {
            value = Long.parseLong(text);
        } catch (NumberFormatException e) {
            return StripeErrors.invalid("parameter_invalid_integer", "Invalid integer: amount.", "amount");
        }
        if (value < 1) {
            return StripeErrors.invalid("amount_too_small", "Amount must be at least 1 minor unit.", "amount");
        }
        if (value > MAX_AMOUNT) {
            return StripeErrors.invalid("amount_too_large", "Amount must be no more than 99999999.", "amount");
        }
        return null;
    }

    /** A list's {@code limit}: 10 when absent, -1 when not an integer in 1..100. */
    static int limit(String text) {
        if (text == null) {
            return 10;
        }
        try {
            int value = Integer.parseInt(text);
            return value >= 1 && value <= 100 ? value : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static Reply limitError() {
        return StripeErrors.invalid("parameter_invalid_integer", "limit must be between 1 and 100.", "limit");
    }

    static Long parseLong(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** A parameter name as it may be echoed: printable ASCII, at most 64 characters. */
    static String safe(String text) {
        String cut = text.length() > 64 ? text.substring(0, 64) : text;
        return new String(cut.getBytes(StandardCharsets.US_ASCII), StandardCharsets.US_ASCII)
                .replaceAll("[^\\x20-\\x7e]", "?");
    }
}
