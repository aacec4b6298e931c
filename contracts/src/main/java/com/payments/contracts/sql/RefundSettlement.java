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
 *
 * @param status SUCCEEDED or FAILED
 * @param actor who settled it, in the resolved items' note ({@code refunds-worker}, {@code webhook})
 * @param headers the trace headers of its event
 */
public record RefundSettlement(
        UUID refundId,
        String status,
        String pspReference,
        String failureCode,
        String actor,
        Map<String, String> headers) {
    /** What {@link #settleOnce} did. */
    public enum Settled {
        /** The event was recorded as applied and the refund settled. */
        SETTLED,
        /** The event was recorded as applied; the refund was no longer PENDING, so nothing else changed. */
        NOT_PENDING,
        /** The event was applied before (another delivery got there first): nothing changed. */
        EVENT_APPLIED_BEFORE
    }

    /**
     * Settles the refund if it is still PENDING.
     *
     * @return false when the refund was no longer PENDING (then nothing changed)
     */
    public Uni<Boolean> settle(SqlClient client) {
        return client.preparedQuery("SELECT settle_refund($1, $2, $3, $4, $5, $6) AS settled")
                .execute(arguments())
                .map(rows -> rows.iterator().next().getBoolean("settled"));
    }

    /**
     * {@link #settle} and the deduplication of the event that asked for it in one statement (one round trip and one
     * commit, no transaction block): records {@code eventId} in {@code consumed_events} for {@code consumer} and
     * settles the refund, or changes nothing when that event id was recorded already.
     */
    public Uni<Settled> settleOnce(SqlClient client, String consumer, UUID eventId) {
        return client.preparedQuery(
                        """
                        WITH fresh AS (
                            INSERT INTO consumed_events (consumer, event_id) VALUES ($7, $8)
                            ON CONFLICT DO NOTHING RETURNING 1)
                        SELECT settle_refund($1, $2, $3, $4, $5, $6) AS settled FROM fresh""")
                .execute(arguments().addValue(consumer).addValue(eventId))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return Settled.EVENT_APPLIED_BEFORE;
                    }
                    return rows.iterator().next().getBoolean("settled") ? Settled.SETTLED : Settled.NOT_PENDING;
                });
    }

    /** {@code settle_refund}'s arguments, $1 to $6. */
    private Tuple arguments() {
        return Tuple.from(Arrays.asList(
                refundId, status, pspReference, failureCode, actor, new JsonObject(new HashMap<>(headers))));
    }
}
