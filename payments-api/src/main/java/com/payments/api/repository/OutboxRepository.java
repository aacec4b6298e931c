package com.payments.api.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** Rows for outbox-relay, written inside the business transaction. */
@ApplicationScoped
public class OutboxRepository {

    public Uni<Void> insert(
            SqlClient client,
            UUID eventId,
            String eventType,
            String topic,
            String key,
            String payloadJson,
            String headersJson) {
        return client.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
                        VALUES ($1, $2, $3, $4, $5::text::jsonb, $6::text::jsonb)""")
                .execute(Tuple.of(eventId, eventType, topic, key, payloadJson, headersJson))
                .replaceWithVoid();
    }
}
