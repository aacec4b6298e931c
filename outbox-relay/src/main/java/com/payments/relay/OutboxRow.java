package com.payments.relay;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/** One unsent {@code outbox} row as the relay publishes it: {@code payload} is the JSON text of the record value. */
public record OutboxRow(
        long id, UUID eventId, String eventType, String topic, String key, String payload, JsonObject headers) {}
