package com.payments.api.operations;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Refusal;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.BearerIdentityProvider;
import com.payments.api.operations.OperationsRepository.Item;
import com.payments.api.rest.ApiDefinition;
import com.payments.api.rest.PathParams;
import com.payments.api.rest.Problem;
import com.payments.api.rest.ProblemMapper;
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
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * Operator API for {@code operations_queue}, the items the automation left for a human (docs/operations.md): list
 * them, resolve one with a note. For the operator token ({@link ApiRoles#OPERATOR}).
 */
@Path("/v1/admin/operations")
@RolesAllowed(ApiRoles.OPERATOR)
@Tag(name = "operators")
@SecurityRequirement(name = ApiDefinition.OPERATOR_TOKEN)
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
            @Schema(type = SchemaType.OBJECT, description = "What the automation recorded (JSON object)") @JsonRawValue
                    String details,
            String status,
            Instant createdAt,
            @Schema(type = SchemaType.STRING, format = "date-time", nullable = true) Instant resolvedAt) {
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

    static final String RESOLVED_EXAMPLE = "{\"id\":7,\"subjectType\":\"payment\",\"subjectId\":"
            + "\"3f1c2a7e-8d4b-4c55-9a0e-2b6f1d9c4e21\",\"reason\":\"resolver_deadline\",\"details\":"
            + "{\"paymentId\":\"3f1c2a7e-8d4b-4c55-9a0e-2b6f1d9c4e21\",\"merchantId\":\"00000000-0000-4000-8000-00000000000a\",\"amount\":2500,"
            + "\"currency\":\"EUR\",\"createdAt\":\"2026-11-28T18:00:00.123456Z\",\"attempts\":5,\"lastError\":\"TimeoutException\",\"resolution\":\"refunded by hand\"},"
            + "\"status\":\"RESOLVED\",\"createdAt\":\"2026-12-01T18:00:00Z\","
            + "\"resolvedAt\":\"2026-12-01T18:30:00Z\"}";

    private final Pool pool;
    private final OperationsRepository operations;
    private final OperationsService resolutions;

    public OperationsResource(Pool pool, OperationsRepository operations, OperationsService resolutions) {
        this.pool = pool;
        this.operations = operations;
        this.resolutions = resolutions;
    }

    static final String ITEM_EXAMPLE = "{\"id\":7,\"subjectType\":\"payment\",\"subjectId\":"
            + "\"3f1c2a7e-8d4b-4c55-9a0e-2b6f1d9c4e21\",\"reason\":\"resolver_deadline\",\"details\":"
            + "{\"paymentId\":\"3f1c2a7e-8d4b-4c55-9a0e-2b6f1d9c4e21\",\"merchantId\":\"00000000-0000-4000-8000-00000000000a\",\"amount\":2500,"
            + "\"currency\":\"EUR\",\"createdAt\":\"2026-11-28T18:00:00.123456Z\",\"attempts\":5,\"lastError\":\"TimeoutException\"},"
            + "\"status\":\"OPEN\",\"createdAt\":\"2026-12-01T18:00:00Z\",\"resolvedAt\":null}";

    @GET
    @Operation(
            operationId = "listOperationsItems",
            summary = "Operations items in a status (OPEN by default), oldest first")
    @APIResponse(
            responseCode = "200",
            description = "The items",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = ItemList.class),
                            examples = @ExampleObject(name = "one item", value = "{\"data\":[" + ITEM_EXAMPLE + "]}")))
    @APIResponse(
            responseCode = "400",
            description = "`invalid_status`: status is not OPEN or RESOLVED; `invalid_limit`: limit is not 1-500",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(
                                        name = "invalid_status",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_status\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"status must be OPEN or"
                                                + " RESOLVED\",\"code\":\"invalid_status\"}"),
                                @ExampleObject(
                                        name = "invalid_limit",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_limit\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"limit must be an"
                                                + " integer between 1 and 500\",\"code\":\"invalid_limit\"}")
                            }))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<ItemList> list(
            @Parameter(
                            description = "OPEN (default) or RESOLVED",
                            schema =
                                    @Schema(
                                            type = SchemaType.STRING,
                                            enumeration = {"OPEN", "RESOLVED"}))
                    @RestQuery
                    String status,
            @Parameter(
                            description = "At most this many items, 1-500 (default 100)",
                            schema = @Schema(type = SchemaType.INTEGER, minimum = "1", maximum = "500"))
                    @RestQuery
                    String limit) {
        String wanted = status == null ? "OPEN" : status;
        if (!wanted.equals("OPEN") && !wanted.equals("RESOLVED")) {
            throw Refusal.invalid("invalid_status", "status must be OPEN or RESOLVED");
        }
        int max = limit == null ? 100 : parseLimit(limit);
        return operations
                .list(pool, wanted, max)
                .map(items -> new ItemList(items.stream().map(ItemView::of).toList()));
    }

    /** The resolve body, for the OpenAPI document. */
    @Schema(name = "ResolutionRequest", additionalProperties = Schema.False.class)
    record ResolutionBody(
            @Schema(required = true, minLength = 1, maxLength = MAX_RESOLUTION, example = "refunded by hand")
                    String resolution) {}

    @POST
    @Path("/{id}/resolve")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(operationId = "resolveOperationsItem", summary = "Resolve an OPEN item with a note (1-500 characters)")
    @RequestBody(
            required = true,
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = ResolutionBody.class),
                            examples =
                                    @ExampleObject(
                                            name = "resolution",
                                            value = "{\"resolution\":\"refunded by hand\"}")))
    @APIResponse(
            responseCode = "200",
            description = "The resolved item (status RESOLVED, the note in details.resolution)",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = ItemView.class),
                            examples = @ExampleObject(name = "resolved", value = RESOLVED_EXAMPLE)))
    @APIResponse(
            responseCode = "400",
            description = "Invalid body. Codes: invalid_json, unknown_field, body_too_large, invalid_resolution,"
                    + " bad_request",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(name = "invalid_json", value = ApiDefinition.INVALID_JSON),
                                @ExampleObject(
                                        name = "invalid_resolution",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_resolution\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"resolution is"
                                                + " required\",\"code\":\"invalid_resolution\"}")
                            }))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "404", ref = "NotFound")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(
            responseCode = "409",
            description = "`operations_item_resolved`: already resolved; the first note stays",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "operations_item_resolved",
                                            value = "{\"type\":\"" + ApiDefinition.TYPE + "operations_item_resolved\","
                                                    + "\"title\":\"Already resolved\",\"status\":409,\"detail\":"
                                                    + "\"This operations item is already resolved\",\"code\":"
                                                    + "\"operations_item_resolved\"}")))
    @APIResponse(responseCode = "413", ref = "PayloadTooLarge")
    @APIResponse(responseCode = "415", ref = "UnsupportedMediaType")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<ItemView> resolve(
            @Context HttpServerRequest http,
            @Parameter(description = "The item's id", schema = @Schema(type = SchemaType.INTEGER, format = "int64"))
                    @RestPath
                    String id,
            byte[] body) {
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
