package com.payments.api.common;

import java.util.UUID;

/**
 * An outbox row written inside a business statement (outbox-relay publishes it). Its Kafka key is always the
 * payment id, which the statement supplies: one payment per transaction (see the V10 ordering trigger).
 */
public record OutboxRow(UUID eventId, String eventType, String topic, String payloadJson, String headersJson) {}
