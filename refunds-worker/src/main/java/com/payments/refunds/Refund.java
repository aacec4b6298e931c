package com.payments.refunds;

import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A refund as the worker executes it, with the PSP charge it refunds ({@code payments.psp_reference}).
 *
 * @param attempts PSP attempts so far, this one included once the refund is claimed
 * @param metadata the merchant's metadata of the refund, carried into its RefundSucceeded/RefundFailed event
 */
public record Refund(
        UUID id,
        UUID paymentId,
        UUID merchantId,
        long amount,
        String currency,
        String status,
        int attempts,
        String chargeReference,
        Map<String, String> metadata) {

    public static final String PENDING = "PENDING";

    public static Refund from(Row row) {
        return new Refund(
                row.getUUID("id"),
                row.getUUID("payment_id"),
                row.getUUID("merchant_id"),
                row.getLong("amount"),
                row.getString("currency"),
                row.getString("status"),
                row.getInteger("attempts"),
                row.getString("charge_reference"),
                metadata(row.getJsonObject("metadata")));
    }

    private static Map<String, String> metadata(JsonObject column) {
        Map<String, String> metadata = new TreeMap<>();
        if (column != null) {
            column.forEach(e -> metadata.put(e.getKey(), (String) e.getValue()));
        }
        return metadata;
    }

    public boolean pending() {
        return PENDING.equals(status);
    }
}
