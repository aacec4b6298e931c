package com.payments.api.operations;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.OperationsRepository;
import com.payments.api.common.OperationsRepository.Item;
import com.payments.api.common.Refusal;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.BearerIdentityProvider;
import com.payments.api.rest.PathParams;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * Operator API for {@code operations_queue}, the items the automation left for a human (docs/operations.md): list
 * them, resolve one with a note. For the operator token ({@link ApiRoles#OPERATOR}).
 */
@Path("/v1/admin/operations")
@RolesAllowed(ApiRoles.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class OperationsResource {
    private static final int MAX_LIMIT = 500;
    private static final int MAX_RESOLUTION = 500;

    /** An item; {@code details} is the stored JSON as is (with {@code resolution} once resolved). */
    @RegisterForReflection
    public record ItemView(
            long id,
            String subjectType,
            String subjectId,
            String reason,
            @JsonRawValue String details,
            String status,
            Instant createdAt,
            Instant resolvedAt) {
        static ItemView of(Item item) {
            return new ItemView(
                    item.id(),
                    item.subjectType(),
                    item.subjectId(),
                    item.reason(),
                    item.detailsJson(),
                    item.status(),
                    item.createdAt().toInstant(),
                    item.resolvedAt() == null ? null : item.resolvedAt().toInstant());
        }
    }

    @RegisterForReflection
    public record ItemList(List<ItemView> data) {}

    private final Pool pool;
    private final OperationsRepository operations;
    private final OperationsService resolutions;

    public OperationsResource(Pool pool, OperationsRepository operations, OperationsService resolutions) {
        this.pool = pool;
        this.operations = operations;
        this.resolutions = resolutions;
    }

    @GET
    public Uni<ItemList> list(@RestQuery String status, @RestQuery String limit) {
        String wanted = status == null ? "OPEN" : status;
        if (!wanted.equals("OPEN") && !wanted.equals("RESOLVED")) {
            throw Refusal.invalid("invalid_status", "status must be OPEN or RESOLVED");
        }
        int max = limit == null ? 100 : parseLimit(limit);
        return operations
                .list(pool, wanted, max)
                .map(items -> new ItemList(items.stream().map(ItemView::of).toList()));
    }

    @POST
    @Path("/{id}/resolve")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<ItemView> resolve(@Context HttpServerRequest http, @RestPath String id, byte[] body) {
        long itemId = PathParams.positiveLong(id);
        ObjectNode json = JsonBodies.parseObject(body, 4096, Set.of("resolution"));
        String resolution = JsonBodies.nonBlankText(json, "resolution", MAX_RESOLUTION, "invalid_resolution");
        return resolutions
                .resolve(
                        itemId,
                        resolution,
                        BearerIdentityProvider.OPERATOR_TOKEN,
                        "api",
                        http.remoteAddress() == null
                                ? null
                                : http.remoteAddress().hostAddress())
                .map(ItemView::of);
    }

    private static int parseLimit(String limit) {
        try {
            int value = Integer.parseInt(limit);
            if (value >= 1 && value <= MAX_LIMIT) {
                return value;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw Refusal.invalid("invalid_limit", "limit must be an integer between 1 and 500");
    }
}
