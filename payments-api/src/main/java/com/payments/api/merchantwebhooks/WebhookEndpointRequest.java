package com.payments.api.merchantwebhooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Refusal;
import com.payments.api.events.EventResource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A validated {@code POST /v1/webhook_endpoints} body. Nothing is stored before {@link #parse} accepted it (and the
 * URL passed {@link EndpointUrlCheck}).
 *
 * @param events the event types to receive, or {@code "*"} for every type
 */
public record WebhookEndpointRequest(String url, List<String> events) {
    /** Every type for which an endpoint can receive events. */
    public static final String ALL = "*";
    /** The types of docs/architecture.md §6 that reach merchants: those of the events feed. */
    public static final Set<String> TYPES = EventResource.TYPES;

    private static final Set<String> FIELDS = Set.of("url", "events");

    public static WebhookEndpointRequest parse(byte[] body, int maxBytes) {
        ObjectNode json = JsonBodies.parseObject(body, maxBytes, FIELDS);
        String url = JsonBodies.text(json, "url", true, "invalid_url");
        JsonNode events = json.get("events");
        if (events == null || !events.isArray() || events.isEmpty()) {
            throw Refusal.invalid("invalid_events", "events must be a non-empty array of event types or \"*\"");
        }
        Set<String> types = new LinkedHashSet<>();
        for (JsonNode event : events) {
            if (!event.isTextual() || !(TYPES.contains(event.textValue()) || ALL.equals(event.textValue()))) {
                throw Refusal.invalid(
                        "invalid_events",
                        "each event must be \"*\" or one of "
                                + String.join(", ", TYPES.stream().sorted().toList()));
            }
            if (!types.add(event.textValue())) {
                throw Refusal.invalid("invalid_events", "events must not repeat a type");
            }
        }
        return new WebhookEndpointRequest(url, new ArrayList<>(types));
    }
}
