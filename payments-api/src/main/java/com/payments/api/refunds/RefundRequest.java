package com.payments.api.refunds;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Metadata;
import com.payments.api.common.Refusal;
import com.payments.api.payment.AmountLimits;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** A validated {@code POST /v1/payments/{id}/refunds} body. Nothing is stored before {@link #parse} accepted it. */
public record RefundRequest(long amount, String reason, Map<String, String> metadata) {
    /** The refunds table allows 500 characters; a reason is free text without control characters. */
    public static final int MAX_REASON_LENGTH = 500;

    private static final Set<String> FIELDS = Set.of("amount", "reason", Metadata.FIELD);
    private static final Pattern REASON = Pattern.compile("[^\\p{Cc}]{1," + MAX_REASON_LENGTH + "}");

    public static RefundRequest parse(byte[] body, int maxBytes) {
        ObjectNode json = JsonBodies.parseObject(body, maxBytes, FIELDS);
        long amount = JsonBodies.integer(json, "amount", AmountLimits.MIN, AmountLimits.MAX, true, "invalid_amount");
        String reason = JsonBodies.text(json, "reason", false, "invalid_reason");
        if (reason != null && !REASON.matcher(reason).matches()) {
            throw Refusal.invalid(
                    "invalid_reason",
                    "reason must be 1-" + MAX_REASON_LENGTH + " characters without control characters");
        }
        return new RefundRequest(amount, reason, Metadata.parse(json));
    }

    /** The canonical body that the request hash covers. */
    public ObjectNode canonicalJson() {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("amount", amount);
        if (reason != null) {
            node.put("reason", reason);
        }
        Metadata.addTo(node, metadata);
        return node;
    }
}
