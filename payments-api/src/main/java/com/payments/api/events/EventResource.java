package com.payments.api.events;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.payments.api.common.Page;
import com.payments.api.common.Refusal;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.rest.PathParams;
import com.payments.contracts.events.MerchantEvent;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;
import org.jboss.resteasy.reactive.RestPath;

/**
 * The merchant's events feed (docs/api.md "Events"): the payment events of the last 30 days, for a receiver that
 * was down to catch up.
 */
@Path("/v1/events")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
public class EventResource {
    /** The types of docs/architecture.md §6 that reach merchants. */
    public static final Set<String> TYPES = MerchantEvent.TYPES;

    private final SecurityIdentity identity;
    private final Pool pool;
    private final EventRepository events;

    public EventResource(SecurityIdentity identity, Pool pool, EventRepository events) {
        this.identity = identity;
        this.pool = pool;
        this.events = events;
    }

    /** A page of events, newest first, as the other lists. */
    public record EventList(List<MerchantEvent> data, @JsonProperty("has_more") boolean hasMore) {}

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<EventList> events(HttpServerRequest request) {
        String type = request.getParam("type");
        if (type != null && !TYPES.contains(type)) {
            throw Refusal.invalid(
                    "invalid_type",
                    "type must be one of "
                            + String.join(", ", TYPES.stream().sorted().toList()));
        }
        Instant from = createdFrom(request.getParam("created[gte]"));
        Page page = Page.of(request);
        return events.page(pool, MerchantPrincipal.of(identity).id(), type, from, page)
                .map(slice -> new EventList(slice.data(), slice.hasMore()));
    }

    @GET
    @Path("/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<MerchantEvent> event(@RestPath String id) {
        return events.find(pool, MerchantPrincipal.of(identity).id(), PathParams.uuid(id))
                .map(event -> {
                    if (event == null) {
                        throw Refusal.notFound();
                    }
                    return event;
                });
    }

    private static Instant createdFrom(String value) {
        if (value == null) {
            return null;
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw Refusal.invalid(
                    "invalid_created", "created[gte] must be an ISO-8601 instant such as 2026-12-01T00:00:00Z");
        }
    }
}
