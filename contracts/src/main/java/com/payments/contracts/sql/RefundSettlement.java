package com.payments.contracts.sql;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;

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

    /** A settlement asked for by an event (refunds-worker: a refund command), for {@link #settleOnce}. */
    public record ByEvent(RefundSettlement settlement, UUID eventId) {}

    /**
     * {@link #settleOnce}'s statement: $1 to $7 one array element per settlement, $8 the consumer. Only the rows whose
     * {@code consumed_events} insert happened call {@code settle_refund} (a CASE does not evaluate the branch it does
     * not take); the others answer NULL. One output row per input row, in input order.
     */
    private static final String SETTLE_ONCE =
            """
            WITH input AS (
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[])
                    WITH ORDINALITY AS t (refund_id, status, psp_reference, failure_code, actor, headers, event_id, n)),
            fresh AS (
                INSERT INTO consumed_events (consumer, event_id) SELECT $8::text, event_id FROM input
                ON CONFLICT DO NOTHING RETURNING event_id)
            SELECT CASE WHEN fresh.event_id IS NOT NULL
                        THEN settle_refund(refund_id, status, psp_reference, failure_code, actor, headers::jsonb)
                   END AS settled
              FROM input LEFT JOIN fresh USING (event_id)
             ORDER BY n""";

    /**
     * {@link #settle} and the deduplication of the event that asked for it, for one or many settlements in one
     * statement (one round trip and one commit, no transaction block): per settlement, records its {@code eventId} in
     * {@code consumed_events} for {@code consumer} and settles the refund, or changes nothing when that event id was
     * recorded already. Answers one {@link Settled} per settlement, in order. A refund must not appear twice in one
     * statement (and so, since an event asks for one refund, neither may an event id): its second row would find the
     * refund settled by the first and answer {@link Settled#NOT_PENDING}. When PostgreSQL rejects one row (it raises in
     * {@code settle_refund}), none of the statement happened.
     */
    public static Uni<List<Settled>> settleOnce(SqlClient client, String consumer, List<ByEvent> batch) {
        return client.preparedQuery(SETTLE_ONCE)
                .execute(Tuple.from(Arrays.asList(
                        column(batch, s -> s.settlement().refundId(), UUID[]::new),
                        column(batch, s -> s.settlement().status(), String[]::new),
                        column(batch, s -> s.settlement().pspReference(), String[]::new),
                        column(batch, s -> s.settlement().failureCode(), String[]::new),
                        column(batch, s -> s.settlement().actor(), String[]::new),
                        column(batch, s -> s.settlement().headersJson().encode(), String[]::new),
                        column(batch, ByEvent::eventId, UUID[]::new),
                        consumer)))
                .map(rows -> {
                    List<Settled> answers = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        Boolean settled = row.getBoolean("settled");
                        answers.add(
                                settled == null
                                        ? Settled.EVENT_APPLIED_BEFORE
                                        : settled ? Settled.SETTLED : Settled.NOT_PENDING);
                    }
                    return answers;
                });
    }

    /** One array parameter of {@link #SETTLE_ONCE}: {@code field} of every settlement, in order. */
    private static <T> T[] column(List<ByEvent> batch, Function<ByEvent, T> field, IntFunction<T[]> array) {
        return batch.stream().map(field).toArray(array);
    }

    /** {@code settle_refund}'s arguments, $1 to $6. */
    private Tuple arguments() {
        return Tuple.from(Arrays.asList(refundId, status, pspReference, failureCode, actor, headersJson()));
    }

    /** The trace headers as {@code settle_refund}'s jsonb argument. */
    public JsonObject headersJson() {
        return new JsonObject(new HashMap<>(headers));
    }
}
