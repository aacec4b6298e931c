package com.payments.api.capture;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Metadata;
import com.payments.api.common.Refusal;
import com.payments.api.payment.AmountLimits;
import java.util.Currency;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A validated {@code POST /v1/payments} body. Nothing is stored before {@link #parse} accepted it. {@code captureMethod}:
 * {@code manual} (authorize now, capture later) or {@code automatic} (captured at once; also when absent).
 */
public record CaptureRequest(
        String orderId,
        long amount,
        String currency,
        String source,
        Map<String, String> metadata,
        String captureMethod) {
    static final String MANUAL = "manual";
    static final String AUTOMATIC = "automatic";

    private static final Set<String> FIELDS =
            Set.of("orderId", "amount", "currency", "source", "captureMethod", Metadata.FIELD);
    private static final Pattern PRINTABLE = Pattern.compile("[\\x20-\\x7E]{1,255}");
    private static final Pattern TOKEN = Pattern.compile("tok_[A-Za-z0-9_]{1,100}");

    /**
     * ISO 4217 codes the JDK knows, without those that have no minor unit (XAU, XXX, XTS...): an amount in minor
     * units means nothing for them.
     */
    static final Set<String> CURRENCIES = Currency.getAvailableCurrencies().stream()
            .filter(c -> c.getDefaultFractionDigits() >= 0)
            .map(Currency::getCurrencyCode)
            .collect(Collectors.toUnmodifiableSet());

    public static CaptureRequest parse(byte[] body, int maxBytes) {
        // A card number in any field (source, orderId) is refused by parseObject, before any field is looked at.
        ObjectNode json = JsonBodies.parseObject(body, maxBytes, FIELDS);
        String source = JsonBodies.text(json, "source", true, "invalid_source");
        if (!TOKEN.matcher(source).matches()) {
            throw Refusal.invalid("invalid_source", "source must be a PSP token such as tok_visa");
        }
        String orderId = JsonBodies.text(json, "orderId", true, "invalid_order_id");
        if (!PRINTABLE.matcher(orderId).matches()) {
            throw Refusal.invalid("invalid_order_id", "orderId must be 1-255 printable ASCII characters");
        }
        long amount = JsonBodies.integer(json, "amount", AmountLimits.MIN, AmountLimits.MAX, true, "invalid_amount");
        String currency = JsonBodies.text(json, "currency", true, "invalid_currency");
        if (!CURRENCIES.contains(currency)) {
            throw Refusal.invalid("invalid_currency", "currency must be a known ISO 4217 code such as EUR");
        }
        String captureMethod = JsonBodies.text(json, "captureMethod", false, "invalid_capture_method");
        if (captureMethod != null && !captureMethod.equals(AUTOMATIC) && !captureMethod.equals(MANUAL)) {
            throw Refusal.invalid("invalid_capture_method", "captureMethod must be automatic or manual");
        }
        return new CaptureRequest(
                orderId,
                amount,
                currency,
                source,
                Metadata.parse(json),
                captureMethod == null ? AUTOMATIC : captureMethod);
    }

    /** Authorize now, capture later. */
    public boolean manual() {
        return MANUAL.equals(captureMethod);
    }

    /**
     * The canonical body that the request hash covers. An automatic capture's is what it was before capture methods
     * existed (a key stored then still matches its retry); a manual one adds {@code captureMethod}.
     */
    public ObjectNode canonicalJson() {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("amount", amount);
        node.put("currency", currency);
        node.put("orderId", orderId);
        node.put("source", source);
        if (manual()) {
            node.put("captureMethod", MANUAL);
        }
        Metadata.addTo(node, metadata);
        return node;
    }
}
