package com.payments.refunds;

import io.vertx.mutiny.sqlclient.Row;
import java.util.UUID;

/**
 * A refund as the worker executes it, with the PSP charge it refunds ({@code payments.psp_reference}).
 *
 * @param attempts PSP attempts so far, this one included once the refund is claimed
 */
public record Refund(
        UUID id,
        UUID paymentId,
        UUID merchantId,
        long amount,
        String currency,
        String status,
        int attempts,
        String chargeReference) {

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
                row.getString("charge_reference"));
    }

    public boolean pending() {
        return PENDING.equals(status);
    }
}
