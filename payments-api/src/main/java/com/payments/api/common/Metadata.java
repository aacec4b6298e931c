package com.payments.api.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.json.JsonObject;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A merchant's own key-value data on a payment or a refund (docs/api.md "Metadata"): at most 20 keys of 1-40
 * characters, each value a string of at most 500 characters, no control characters. The same rule is a CHECK in the
 * database ({@code metadata_valid}, V85). Card numbers in keys or values are refused before this rule is looked at
 * ({@link JsonBodies#parseObject}).
 */
public final class Metadata {
    public static final String FIELD = "metadata";
    public static final int MAX_KEYS = 20;
    public static final int MAX_KEY_LENGTH = 40;
    public static final int MAX_VALUE_LENGTH = 500;
    private static final Pattern CONTROL = Pattern.compile("\\p{Cc}");
    private static final String RULE = "metadata must be an object of at most " + MAX_KEYS + " keys of 1-"
            + MAX_KEY_LENGTH + " characters with string values of at most " + MAX_VALUE_LENGTH
            + " characters, without control characters";

    private Metadata() {}

    /**
     * The optional {@code metadata} field of a request body: absent or null is none ({@code {}}). Sorted by key, so
     * that equal metadata is written and hashed alike.
     */
    public static Map<String, String> parse(ObjectNode body) {
        JsonNode node = body.get(FIELD);
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject() || node.size() > MAX_KEYS) {
            throw invalid();
        }
        TreeMap<String, String> metadata = new TreeMap<>();
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            String key = field.getKey();
            JsonNode value = field.getValue();
            if (!fits(key, 1, MAX_KEY_LENGTH) || !value.isTextual() || !fits(value.textValue(), 0, MAX_VALUE_LENGTH)) {
                throw invalid();
            }
            metadata.put(key, value.textValue());
        }
        return Collections.unmodifiableMap(metadata);
    }

    /** Length in characters (code points, as PostgreSQL counts them) within bounds, and no control character. */
    private static boolean fits(String text, int min, int max) {
        int length = text.codePointCount(0, text.length());
        return length >= min && length <= max && !CONTROL.matcher(text).find();
    }

    private static Refusal invalid() {
        return Refusal.invalid("invalid_metadata", RULE);
    }

    /**
     * Adds {@code metadata} to a request's canonical body (the idempotency fingerprint) when there is any: a request
     * without metadata hashes as it did before metadata existed, so keys stored then still replay.
     */
    public static void addTo(ObjectNode canonical, Map<String, String> metadata) {
        if (!metadata.isEmpty()) {
            ObjectNode node = JsonNodeFactory.instance.objectNode();
            metadata.forEach(node::put);
            canonical.set(FIELD, node);
        }
    }

    /** The JSON text written to a {@code metadata} jsonb column. */
    public static String json(Map<String, String> metadata) {
        return new JsonObject(Map.<String, Object>copyOf(metadata)).encode();
    }

    /** A {@code metadata} jsonb column as read (null, for a column not selected, reads as none). */
    public static Map<String, String> of(JsonObject column) {
        if (column == null || column.isEmpty()) {
            return Map.of();
        }
        TreeMap<String, String> metadata = new TreeMap<>();
        column.forEach(e -> metadata.put(e.getKey(), (String) e.getValue()));
        return Collections.unmodifiableMap(metadata);
    }
}
