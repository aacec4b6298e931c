package com.payments.api.merchants;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.merchants.MerchantAdminService.IssuedKey;
import com.payments.api.rest.ApiDefinition;
import com.payments.api.rest.PathParams;
import com.payments.api.rest.Problem;
import com.payments.api.rest.ProblemMapper;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
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
import org.jboss.resteasy.reactive.RestResponse;

/**
 * Operator API for merchants and their keys, for the operator token ({@link ApiRoles#OPERATOR}). Keys are returned
 * once and never stored in clear.
 */
@Path("/v1/admin/merchants")
@RolesAllowed(ApiRoles.OPERATOR)
@Tag(name = "operators")
@SecurityRequirement(name = ApiDefinition.OPERATOR_TOKEN)
public class MerchantAdminResource {
    private static final Set<String> MERCHANT_FIELDS = Set.of("name", "rateLimitPerSecond");

    private final MerchantAdminService admin;

    public MerchantAdminResource(MerchantAdminService admin) {
        this.admin = admin;
    }

    /** The create-merchant body, for the OpenAPI document. */
    @Schema(name = "MerchantRequest", additionalProperties = Schema.False.class)
    record MerchantBody(
            @Schema(required = true, minLength = 1, maxLength = 200, example = "Demo Shop C") String name,
            @Schema(
                            minimum = "1",
                            maximum = "1000000",
                            description = "Requests per second (default 100)",
                            example = "100")
                    Integer rateLimitPerSecond) {}

    static final String ISSUED_KEY_EXAMPLE =
            "{\"merchantId\":\"43047ea0-e6b3-4208-98fd-7418bd6bcb00\",\"keyId\":\"2fa9f943-ddad-4b82-93b6-1b962ce9cc85\","
                    + "\"apiKey\":\"sk_live_EXAMPLEonlyEXAMPLEonlyEXAMPLEonlyEXAMPLEo\",\"revokedKeys\":0}";

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(operationId = "createMerchant", summary = "Create a merchant and its first API key (shown once)")
    @RequestBody(
            required = true,
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = MerchantBody.class),
                            examples =
                                    @ExampleObject(
                                            name = "merchant",
                                            value = "{\"name\":\"Demo Shop C\",\"rateLimitPerSecond\":100}")))
    @APIResponse(
            responseCode = "201",
            description = "The merchant and its key; the key is shown only here",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = IssuedKey.class),
                            examples = @ExampleObject(name = "issued", value = ISSUED_KEY_EXAMPLE)))
    @APIResponse(
            responseCode = "400",
            description = "Invalid body. Codes: invalid_json, unknown_field, body_too_large, invalid_name,"
                    + " invalid_rate_limit, bad_request",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(name = "invalid_json", value = ApiDefinition.INVALID_JSON),
                                @ExampleObject(
                                        name = "invalid_name",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_name\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"name is required\","
                                                + "\"code\":\"invalid_name\"}")
                            }))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "413", ref = "PayloadTooLarge")
    @APIResponse(responseCode = "415", ref = "UnsupportedMediaType")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<RestResponse<IssuedKey>> create(byte[] body) {
        ObjectNode json = JsonBodies.parseObject(body, 4096, MERCHANT_FIELDS);
        String name = JsonBodies.nonBlankText(json, "name", 200, "invalid_name");
        Long rate = JsonBodies.integer(json, "rateLimitPerSecond", 1, 1_000_000, false, "invalid_rate_limit");
        return admin.createMerchant(name, rate == null ? 100 : rate.intValue())
                .map(key -> RestResponse.status(RestResponse.Status.CREATED, key));
    }

    @POST
    @Path("/{merchantId}/keys")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "issueMerchantKey",
            summary = "Issue a new API key (shown once); revokeOthers=true rotates (the other keys stop working)")
    @APIResponse(
            responseCode = "201",
            description = "The new key; the key is shown only here",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = IssuedKey.class),
                            examples = @ExampleObject(name = "issued", value = ISSUED_KEY_EXAMPLE)))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "404", ref = "NotFound")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<RestResponse<IssuedKey>> issueKey(
            @Parameter(description = "The merchant's id", schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                    @RestPath
                    String merchantId,
            @Parameter(description = "Revoke the merchant's other keys (rotation)") @RestQuery boolean revokeOthers) {
        return admin.issueKey(PathParams.uuid(merchantId), revokeOthers)
                .map(key -> RestResponse.status(RestResponse.Status.CREATED, key));
    }
}
