package com.payments.api.events;

import com.payments.api.common.Page;
import com.payments.contracts.events.MerchantEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/** The merchants' events feed, {@code merchant_events} (V89: filled by a trigger on the outbox). */
@ApplicationScoped
public class EventRepository {
    private static final String COLUMNS =
            "id, type, created_at, version, payment::text AS payment, payload::text AS payload";

    /** A page of the merchant's events, newest first, of one type unless it is null, created from {@code from} on. */
    public Uni<Page.Slice<MerchantEvent>> page(
            SqlClient client, UUID merchantId, String type, Instant from, Page page) {
        return page.read(client, "merchant_events", COLUMNS, merchantId, "type", type, from, EventRepository::event);
    }

    /** The merchant's event of that id; null when there is none (or it is another merchant's). */
    public Uni<MerchantEvent> find(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery("SELECT " + COLUMNS + " FROM merchant_events WHERE id = $1 AND merchant_id = $2")
                .execute(Tuple.of(id, merchantId))
                .map(rows -> rows.size() == 0 ? null : event(rows.iterator().next()));
    }

    /** Deletes at most {@code limit} events older than {@code retention}, oldest first; returns how many. */
    public Uni<Integer> deleteOlderThan(SqlClient client, Duration retention, int limit) {
        return client.preparedQuery(
                        """
                        DELETE FROM merchant_events WHERE id = ANY (ARRAY(
                            SELECT id FROM merchant_events
                             WHERE created_at < now() - make_interval(secs => $1)
                             ORDER BY created_at LIMIT $2))""")
                .execute(Tuple.of((double) retention.toSeconds(), limit))
                .map(RowSet::rowCount);
    }

    private static MerchantEvent event(Row row) {
        return new MerchantEvent(
                row.getUUID("id"),
                row.getString("type"),
                row.getOffsetDateTime("created_at").toInstant(),
                row.getLong("version"),
                row.getString("payment"),
                row.getString("payload"));
    }
}
