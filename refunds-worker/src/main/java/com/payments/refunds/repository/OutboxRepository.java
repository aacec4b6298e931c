package com.payments.refunds.repository;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.PaymentEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** Writes events to the transactional outbox; outbox-relay publishes them. Record key = payment id. */
@ApplicationScoped
public class OutboxRepository {
    private final ObjectMapper mapper;

    public OutboxRepository(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    public Uni<Void> insert(SqlClient client, String topic, PaymentEvent event) {
        String payload;
        try {
            payload = mapper.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            return Uni.createFrom().failure(e);
        }
        return client.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload)
                        VALUES ($1, $2, $3, $4, $5)""")
                .execute(Tuple.of(
                        event.eventId(), event.type(), topic, event.paymentId().toString(), new JsonObject(payload)))
                .replaceWithVoid();
    }
}
