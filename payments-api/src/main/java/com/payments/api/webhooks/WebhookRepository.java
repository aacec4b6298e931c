package com.payments.api.webhooks;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** psp_webhook_events (stored once by the PSP's event id) and the refund lookups of webhook handling. */
@ApplicationScoped
public class WebhookRepository {

    /** Stores the event unless its id is known; true when this call stored it (a concurrent copy waits, then false). */
    public Uni<Boolean> insert(SqlClient client, String eventId, String type, String payloadJson) {
        return client.preparedQuery(
                        """
                        INSERT INTO psp_webhook_events (event_id, type, payload) VALUES ($1, $2, $3::text::jsonb)
                        ON CONFLICT (event_id) DO NOTHING""")
                .execute(Tuple.of(eventId, type, payloadJson))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<Void> processed(SqlClient client, String eventId, String outcome) {
        return client.preparedQuery(
                        "UPDATE psp_webhook_events SET processed_at = now(), outcome = $2 WHERE event_id = $1")
                .execute(Tuple.of(eventId, outcome))
                .replaceWithVoid();
    }

    public Uni<Boolean> refundExists(SqlClient client, UUID refundId) {
        return client.preparedQuery("SELECT 1 FROM refunds WHERE id = $1")
                .execute(Tuple.of(refundId))
                .map(rows -> rows.rowCount() == 1);
    }
}
