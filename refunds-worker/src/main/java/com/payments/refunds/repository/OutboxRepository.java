package com.payments.refunds.repository;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.PaymentEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;

/**
 * Writes events to the transactional outbox through the schema's {@code enqueue_event}; outbox-relay publishes them.
 * Record key = payment id.
 */
@ApplicationScoped
public class OutboxRepository {
    private final ObjectMapper mapper;

    public OutboxRepository(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** @param headers the Kafka headers the relay sends with the event (the trace context) */
    public Uni<Void> insert(SqlClient client, String topic, PaymentEvent event, Map<String, String> headers) {
        String payload;
        try {
            payload = mapper.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            return Uni.createFrom().failure(e);
        }
        JsonObject headersJson = new JsonObject();
        headers.forEach(headersJson::put);
        return client.preparedQuery("SELECT enqueue_event($1, $2, $3, $4, $5, $6)")
                .execute(Tuple.of(
                        event.eventId(),
                        event.type(),
                        topic,
                        event.paymentId().toString(),
                        new JsonObject(payload),
                        headersJson))
                .replaceWithVoid();
    }
}
