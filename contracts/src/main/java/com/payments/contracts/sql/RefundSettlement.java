package com.payments.contracts.sql;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The one way a refund is settled, for both callers: refunds-worker (the PSP's answer) and payments-api (the PSP's
 * webhook). The schema's {@code settle_refund} (V95) does the guarded PENDING → SUCCEEDED/FAILED update, the ledger
 * booking or the release of the reservation, the stuck-refund items resolved and the RefundSucceeded/RefundFailed
 * event.
 */
public final class RefundSettlement {
    /** What {@link #settleOnce} did. */
    public enum Settled {
        /** The event was recorded as applied and the refund settled. */
        SETTLED,
        /** The event was recorded as applied; the refund was no longer PENDING, so nothing else changed. */
        NOT_PENDING,
        /** The event was applied before (another delivery got there first): nothing changed. */
        EVENT_APPLIED_BEFORE
    }

    private RefundSettlement() {}

    /**
     * Settles a PENDING refund as {@code status} (SUCCEEDED or FAILED), its event carrying these trace headers.
     *
     * @param actor who settled it, in the resolved items' note ({@code refunds-worker}, {@code webhook})
     * @return false when the refund was no longer PENDING (then nothing changed)
     */
    public static Uni<Boolean> settle(
            SqlClient client,
            UUID refundId,
            String status,
            String pspReference,
            String failureCode,
            String actor,
            Map<String, String> headers) {
        return client.preparedQuery("SELECT settle_refund($1, $2, $3, $4, $5, $6) AS settled")
                .execute(Tuple.of(refundId, status, pspReference, failureCode, actor, json(headers)))
                .map(rows -> rows.iterator().next().getBoolean("settled"));
    }

    /**
     * {@link #settle} and the deduplication of the event that asked for it in one statement (one round trip and one
     * commit, no transaction block): records {@code eventId} in {@code consumed_events} for {@code consumer} and
     * settles the refund, or changes nothing when that event id was recorded already.
     */
    public static Uni<Settled> settleOnce(
            SqlClient client,
            String consumer,
            UUID eventId,
            UUID refundId,
            String status,
            String pspReference,
            String failureCode,
            String actor,
            Map<String, String> headers) {
        return client.preparedQuery(
                        """
                        WITH fresh AS (
                            INSERT INTO consumed_events (consumer, event_id) VALUES ($7, $8)
                            ON CONFLICT DO NOTHING RETURNING 1)
                        SELECT settle_refund($1, $2, $3, $4, $5, $6) AS settled FROM fresh""")
                .execute(Tuple.from(Arrays.asList(
                        refundId, status, pspReference, failureCode, actor, json(headers), consumer, eventId)))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return Settled.EVENT_APPLIED_BEFORE;
                    }
                    return rows.iterator().next().getBoolean("settled") ? Settled.SETTLED : Settled.NOT_PENDING;
                });
    }

    private static JsonObject json(Map<String, String> headers) {
        return new JsonObject(new HashMap<>(headers));
    }
}
