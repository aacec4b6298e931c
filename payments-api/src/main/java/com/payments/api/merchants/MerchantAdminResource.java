package com.payments.api.merchants;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.merchants.MerchantAdminService.IssuedKey;
import com.payments.api.rest.PathParams;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.Set;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * Operator API for merchants and their keys, for the operator token ({@link ApiRoles#OPERATOR}). Keys are returned
 * once and never stored in clear.
 */
@Path("/v1/admin/merchants")
@RolesAllowed(ApiRoles.OPERATOR)
public class MerchantAdminResource {
    private static final Set<String> MERCHANT_FIELDS = Set.of("name", "rateLimitPerSecond");

    private final MerchantAdminService admin;

    public MerchantAdminResource(MerchantAdminService admin) {
        this.admin = admin;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
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
    public Uni<RestResponse<IssuedKey>> issueKey(@RestPath String merchantId, @RestQuery boolean revokeOthers) {
        return admin.issueKey(PathParams.uuid(merchantId), revokeOthers)
                .map(key -> RestResponse.status(RestResponse.Status.CREATED, key));
    }
}
