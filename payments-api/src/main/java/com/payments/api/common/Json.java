package com.payments.api.common;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.PaymentEvent;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** JSON of what payments-api writes itself: stored answers, outbox payloads and their trace headers. */
@ApplicationScoped
public class Json {
    private final ObjectMapper mapper;

    public Json(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    public byte[] bytes(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "Cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    public String text(Object value) {
        return new String(bytes(value), StandardCharsets.UTF_8);
    }

    /** The outbox row of {@code event} on {@code topic}, carrying the request's trace context. */
    public OutboxRow outboxRow(String topic, PaymentEvent event, Map<String, String> traceHeaders) {
        return new OutboxRow(event.eventId(), event.type(), topic, text(event), text(traceHeaders));
    }
}
