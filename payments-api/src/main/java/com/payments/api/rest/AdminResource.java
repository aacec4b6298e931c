package com.payments.api.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.service.JsonBodies;
import com.payments.api.service.MerchantAdminService;
import com.payments.api.service.MerchantAdminService.IssuedKey;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.Set;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * Operator API for merchants and their keys, protected by the operator token ({@link OperatorAuth}). Keys are
 * returned once and never stored in clear.
 */
@Path("/v1/admin/merchants")
@Tag(name = "operators")
public class AdminResource {
    private static final Set<String> MERCHANT_FIELDS = Set.of("name", "rateLimitPerSecond");

    private final MerchantAdminService admin;
    private final OperatorAuth operators;

    public AdminResource(MerchantAdminService admin, OperatorAuth operators) {
        this.admin = admin;
        this.operators = operators;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Create a merchant and its first API key (shown once)")
    @APIResponse(responseCode = "201", description = "{merchantId, keyId, apiKey}")
    @APIResponse(responseCode = "400", description = "Invalid body")
    @APIResponse(responseCode = "401", description = "Missing or wrong operator token")
    public Uni<RestResponse<IssuedKey>> create(@RestHeader("Authorization") String authorization, byte[] body) {
        operators.check(authorization);
        ObjectNode json = JsonBodies.parseObject(body, 4096, MERCHANT_FIELDS);
        String name = JsonBodies.nonBlankText(json, "name", 200, "invalid_name");
        Long rate = JsonBodies.integer(json, "rateLimitPerSecond", 1, 1_000_000, false, "invalid_rate_limit");
        return admin.createMerchant(name, rate == null ? 100 : rate.intValue())
                .map(key -> RestResponse.status(RestResponse.Status.CREATED, key));
    }

    @POST
    @Path("/{merchantId}/keys")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Issue a new API key (shown once); revokeOthers=true rotates (the other keys stop working)")
    @APIResponse(responseCode = "201", description = "{merchantId, keyId, apiKey, revokedKeys}")
    @APIResponse(responseCode = "401", description = "Missing or wrong operator token")
    @APIResponse(responseCode = "404", description = "No such merchant")
    public Uni<RestResponse<IssuedKey>> issueKey(
            @RestHeader("Authorization") String authorization,
            @RestPath String merchantId,
            @RestQuery boolean revokeOthers) {
        operators.check(authorization);
        return admin.issueKey(PaymentResource.uuidOr404(merchantId), revokeOthers)
                .map(key -> RestResponse.status(RestResponse.Status.CREATED, key));
    }
}
