package com.payments.refunds.repository;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.PaymentEvent;
import com.payments.contracts.tracing.TraceHeaders;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Writes events to the transactional outbox through the schema's {@code enqueue_event}; outbox-relay publishes them.
 * Record key = payment id. The row's {@code headers} keep the current trace context (the refund-commands record's
 * span), so the event continues its trace.
 */
@ApplicationScoped
public class OutboxRepository {
    private final ObjectMapper mapper;
    private final TraceHeaders traceHeaders;

    public OutboxRepository(ObjectMapper mapper, TraceHeaders traceHeaders) {
        this.mapper = mapper;
        this.traceHeaders = traceHeaders;
    }

    public Uni<Void> insert(SqlClient client, String topic, PaymentEvent event) {
        String payload;
        try {
            payload = mapper.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            return Uni.createFrom().failure(e);
        }
        return client.preparedQuery("SELECT enqueue_event($1, $2, $3, $4, $5, $6)")
                .execute(Tuple.of(
                        event.eventId(),
                        event.type(),
                        topic,
                        event.paymentId().toString(),
                        new JsonObject(payload),
                        headers()))
                .replaceWithVoid();
    }

    /** The current trace context as the row's headers. */
    private JsonObject headers() {
        JsonObject headers = new JsonObject();
        traceHeaders.current().forEach(headers::put);
        return headers;
    }
}
