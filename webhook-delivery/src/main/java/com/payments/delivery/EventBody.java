package com.payments.delivery;

import com.fasterxml.jackson.annotation.JsonRawValue;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import java.util.UUID;

/**
 * A webhook's body: the event as {@code GET /v1/events/{id}} shows it (payments-api's EventView: same fields, same
 * order, {@code data} the stored payload as PostgreSQL prints it), so a merchant sees one shape in the feed and in
 * webhooks.
 */
@RegisterForReflection
public record EventBody(UUID id, String type, Instant createdAt, @JsonRawValue String data) {}
