package com.payments.api.events;

import com.payments.api.common.Page;
import com.payments.api.config.ApiConfig;
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

/**
 * The merchants' events feed, {@code merchant_events} (V89: filled by a trigger on the outbox). Reads show only events
 * younger than {@code payments.events.retention}, also before {@link EventRetentionJob} has deleted the older ones.
 */
@ApplicationScoped
public class EventRepository {
    private static final String COLUMNS =
            "id, type, created_at, version, payment::text AS payment, payload::text AS payload";

    private final Duration retention;

    public EventRepository(ApiConfig config) {
        this.retention = config.events().retention();
    }

    /**
     * A page of the merchant's events, newest first, of one type unless it is null, created from {@code from} on and
     * within the retention (a lower bound on {@code created_at}, so the index of {@code created[gte]} serves it). A
     * cursor stays usable until its event is deleted (then {@code invalid_cursor}).
     */
    public Uni<Page.Slice<MerchantEvent>> page(
            SqlClient client, UUID merchantId, String type, Instant from, Page page) {
        Instant oldest = Instant.now().minus(retention);
        Instant since = from == null || from.isBefore(oldest) ? oldest : from;
        return page.read(client, "merchant_events", COLUMNS, merchantId, "type", type, since, EventRepository::event);
    }

    /** The merchant's event of that id within the retention; null when there is none (or it is another merchant's). */
    public Uni<MerchantEvent> find(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery(
                        """
                        SELECT %s FROM merchant_events
                         WHERE id = $1 AND merchant_id = $2 AND created_at >= now() - make_interval(secs => $3)"""
                                .formatted(COLUMNS))
                .execute(Tuple.of(id, merchantId, (double) retention.toSeconds()))
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
