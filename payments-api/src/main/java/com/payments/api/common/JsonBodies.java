package com.payments.api.common;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Strict parsing of merchant (and operator) JSON bodies into a tree that the validators check field by field:
 * duplicate keys, trailing data, non-objects, unknown fields, oversized bodies and card numbers in any text are
 * refused. Jackson's own messages are never passed on (they quote the input).
 */
public final class JsonBodies {
    private static final ObjectMapper STRICT = new ObjectMapper(JsonFactory.builder()
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonParser.Feature.ALLOW_COMMENTS);
    private static final ObjectMapper CANONICAL = new ObjectMapper();
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9_]{1,40}");

    private JsonBodies() {}

    /**
     * Parses a JSON object of at most {@code maxBytes} whose field names are all in {@code allowed} and whose text
     * values and nested field names, at any depth, contain no card number ({@link CardNumbers}): refused {@code card_data_rejected} before
     * any field is validated, so no such text is ever stored, published or logged.
     */
    public static ObjectNode parseObject(byte[] body, int maxBytes, Set<String> allowed) {
        if (body == null || body.length == 0) {
            throw Refusal.invalid("invalid_json", "A JSON object body is required");
        }
        if (body.length > maxBytes) {
            throw Refusal.invalid("body_too_large", "The request body exceeds " + maxBytes + " bytes");
        }
        JsonNode tree;
        try {
            tree = STRICT.readTree(body);
        } catch (IOException | RuntimeException e) {
            throw Refusal.invalid("invalid_json", "The body is not valid JSON");
        }
        if (tree == null || !tree.isObject()) {
            throw Refusal.invalid("invalid_json", "The body must be a JSON object");
        }
        Iterator<String> names = tree.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw Refusal.invalid(
                        "unknown_field",
                        SAFE_NAME.matcher(name).matches() && !CardNumbers.containedIn(name)
                                ? "Unknown field: " + name
                                : "The body has a field that is not part of the API");
            }
        }
        tree.fields().forEachRemaining(field -> {
            if (containsCardNumber(field.getValue())) {
                throw Refusal.invalid(
                        "card_data_rejected",
                        field.getKey() + " contains what looks like a card number; card data is never accepted");
            }
        });
        return (ObjectNode) tree;
    }

    /**
     * {@link #parseObject} for an optional body: no body, a blank one or the JSON {@code null} (what generated clients
     * send for an optional body left out) is the empty object.
     */
    public static ObjectNode parseOptionalObject(byte[] body, int maxBytes, Set<String> allowed) {
        if (body == null || body.length == 0 || isBlankOrNull(body)) {
            return JsonNodeFactory.instance.objectNode();
        }
        return parseObject(body, maxBytes, allowed);
    }

    private static boolean isBlankOrNull(byte[] body) {
        String text = new String(body, StandardCharsets.ISO_8859_1).strip();
        return text.isEmpty() || text.equals("null");
    }

    private static boolean containsCardNumber(JsonNode node) {
        if (node.isTextual()) {
            return CardNumbers.containedIn(node.textValue());
        }
        // the field names of a nested object are text the merchant chose too (metadata keys)
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            if (CardNumbers.containedIn(names.next())) {
                return true;
            }
        }
        for (JsonNode child : node) {
            if (containsCardNumber(child)) {
                return true;
            }
        }
        return false;
    }

    /** A required or optional integer field in [min, max]; 1.0, 1e3, "100" and out-of-range values are refused. */
    public static Long integer(ObjectNode body, String field, long min, long max, boolean required, String code) {
        JsonNode node = body.get(field);
        if (node == null || node.isNull()) {
            if (required) {
                throw Refusal.invalid(code, field + " is required");
            }
            return null;
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong() || node.longValue() < min || node.longValue() > max) {
            throw Refusal.invalid(code, field + " must be an integer between " + min + " and " + max);
        }
        return node.longValue();
    }

    /** A required or optional string field. */
    public static String text(ObjectNode body, String field, boolean required, String code) {
        JsonNode node = body.get(field);
        if (node == null || node.isNull()) {
            if (required) {
                throw Refusal.invalid(code, field + " is required");
            }
            return null;
        }
        if (!node.isTextual()) {
            throw Refusal.invalid(code, field + " must be a string");
        }
        return node.textValue();
    }

    /** A required string field of 1 to {@code maxLength} characters that is not all whitespace. */
    public static String nonBlankText(ObjectNode body, String field, int maxLength, String code) {
        String value = text(body, field, true, code);
        if (value.isBlank() || value.length() > maxLength) {
            throw Refusal.invalid(code, field + " must be 1-" + maxLength + " characters");
        }
        return value;
    }

    /**
     * Canonical JSON of a tree: object keys sorted, no whitespace, numbers as written by Jackson. Two bodies that
     * differ only in key order or spacing get the same bytes.
     */
    public static byte[] canonical(JsonNode node) {
        try {
            return CANONICAL.writeValueAsBytes(sorted(node));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode sorted(JsonNode node) {
        if (node.isObject()) {
            TreeMap<String, JsonNode> fields = new TreeMap<>();
            node.fields().forEachRemaining(e -> fields.put(e.getKey(), sorted(e.getValue())));
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            fields.forEach(out::set);
            return out;
        }
        if (node.isArray()) {
            List<JsonNode> items = new ArrayList<>();
            node.forEach(item -> items.add(sorted(item)));
            return JsonNodeFactory.instance.arrayNode().addAll(items);
        }
        return node;
    }
}
