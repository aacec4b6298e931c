package com.payments.api.rest;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.repository.OperationsRepository;
import com.payments.api.repository.OperationsRepository.Item;
import com.payments.api.service.JsonBodies;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * Operator API for {@code operations_queue}, the items the automation left for a human (docs/operations.md): list
 * them, resolve one with a note. Protected by the operator token ({@link OperatorAuth}).
 */
@Path("/v1/admin/operations")
@Tag(name = "operators")
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
    private final OperatorAuth operators;

    public OperationsResource(Pool pool, OperationsRepository operations, OperatorAuth operators) {
        this.pool = pool;
        this.operations = operations;
        this.operators = operators;
    }

    @GET
    @Operation(summary = "Operations items in a status (OPEN by default), oldest first")
    @APIResponse(responseCode = "200", description = "{data: [item]}")
    @APIResponse(responseCode = "400", description = "Unknown status or limit outside 1-500")
    @APIResponse(responseCode = "401", description = "Missing or wrong operator token")
    public Uni<ItemList> list(
            @RestHeader("Authorization") String authorization, @RestQuery String status, @RestQuery String limit) {
        operators.check(authorization);
        String wanted = status == null ? "OPEN" : status;
        if (!wanted.equals("OPEN") && !wanted.equals("RESOLVED")) {
            throw ApiProblem.badRequest("invalid_status", "status must be OPEN or RESOLVED");
        }
        int max = limit == null ? 100 : parseLimit(limit);
        return operations
                .list(pool, wanted, max)
                .map(items -> new ItemList(items.stream().map(ItemView::of).toList()));
    }

    @POST
    @Path("/{id}/resolve")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Resolve an OPEN item with a note ({\"resolution\": \"...\"}, 1-500 characters)")
    @APIResponse(responseCode = "200", description = "The resolved item")
    @APIResponse(responseCode = "400", description = "Invalid body")
    @APIResponse(responseCode = "401", description = "Missing or wrong operator token")
    @APIResponse(responseCode = "404", description = "No such item")
    @APIResponse(responseCode = "409", description = "Already resolved (code operations_item_resolved)")
    public Uni<ItemView> resolve(@RestHeader("Authorization") String authorization, @RestPath String id, byte[] body) {
        operators.check(authorization);
        long itemId = parseId(id);
        ObjectNode json = JsonBodies.parseObject(body, 4096, Set.of("resolution"));
        String resolution = JsonBodies.nonBlankText(json, "resolution", MAX_RESOLUTION, "invalid_resolution");
        return operations
                .resolve(pool, itemId, resolution)
                .flatMap(resolved -> resolved != null
                        ? Uni.createFrom().item(ItemView.of(resolved))
                        : operations.find(pool, itemId).map(existing -> {
                            if (existing == null) {
                                throw ApiProblem.notFound();
                            }
                            throw new ApiProblem(
                                    409,
                                    "operations_item_resolved",
                                    "Already resolved",
                                    "This operations item is already resolved",
                                    null);
                        }));
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
        throw ApiProblem.badRequest("invalid_limit", "limit must be an integer between 1 and 500");
    }

    private static long parseId(String id) {
        try {
            long value = Long.parseLong(id);
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // 404 below, as for any path that names no item
        }
        throw ApiProblem.notFound();
    }
}
