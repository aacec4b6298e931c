package com.payments.api.merchantwebhooks;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Page;
import com.payments.api.config.ApiConfig;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.rest.PathParams;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/** {@code POST /v1/events/{id}/redeliver} (docs/api.md "Webhook endpoints"): send an event of the feed again. */
@Path("/v1/events/{id}/redeliver")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
public class RedeliveryResource {
    private static final Set<String> FIELDS = Set.of("endpointId");

    private final SecurityIdentity identity;
    private final WebhookEndpointService endpoints;
    private final int maxBodyBytes;

    public RedeliveryResource(SecurityIdentity identity, WebhookEndpointService endpoints, ApiConfig config) {
        this.identity = identity;
        this.endpoints = endpoints;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** The deliveries a redeliver call created, one per endpoint, due now. */
    public record RedeliveryAccepted(UUID eventId, List<DeliveryView> deliveries) {}

    /** The body is optional: none sends to every matching endpoint, {@code {"endpointId": ...}} to that one only. */
    @POST
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<RedeliveryAccepted>> redeliver(@RestPath String id, byte[] body) {
        UUID eventId = PathParams.uuid(id);
        UUID endpointId = endpointId(body);
        return endpoints
                .redeliver(MerchantPrincipal.of(identity).id(), eventId, endpointId)
                .map(created ->
                        RestResponse.status(RestResponse.Status.ACCEPTED, new RedeliveryAccepted(eventId, created)));
    }

    private UUID endpointId(byte[] body) {
        if (body == null || body.length == 0) {
            return null;
        }
        ObjectNode json = JsonBodies.parseObject(body, maxBodyBytes, FIELDS);
        String endpointId = JsonBodies.text(json, "endpointId", false, "invalid_endpoint_id");
        return endpointId == null
                ? null
                : Page.id(endpointId, "invalid_endpoint_id", "endpointId must be the id of a webhook endpoint");
    }
}
