package com.payments.api.merchantwebhooks;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.payments.api.common.Page;
import com.payments.api.config.ApiConfig;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.rest.PathParams;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.UUID;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * {@code /v1/webhook_endpoints} (docs/api.md "Webhook endpoints"): where and which of its events a merchant receives
 * as webhooks (sent by webhook-delivery, docs/merchant-webhooks.md). Not the PSP's webhooks to us ({@code pspevents} package).
 */
@Path("/v1/webhook_endpoints")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
public class WebhookEndpointResource {
    private final SecurityIdentity identity;
    private final WebhookEndpointService endpoints;
    private final int maxBodyBytes;

    public WebhookEndpointResource(SecurityIdentity identity, WebhookEndpointService endpoints, ApiConfig config) {
        this.identity = identity;
        this.endpoints = endpoints;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** A page of endpoints, newest first, as the other lists. */
    public record WebhookEndpointList(List<WebhookEndpointView> data, @JsonProperty("has_more") boolean hasMore) {}

    /** A page of an endpoint's deliveries, newest first. */
    public record DeliveryList(List<DeliveryView> data, @JsonProperty("has_more") boolean hasMore) {}

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<WebhookEndpointView>> create(byte[] body) {
        WebhookEndpointRequest request = WebhookEndpointRequest.parse(body, maxBodyBytes);
        return endpoints.create(merchantId(), request).map(created -> withSecret(RestResponse.Status.CREATED, created));
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookEndpointList> list(HttpServerRequest request) {
        Page page = Page.of(request);
        return endpoints.list(merchantId(), page).map(slice -> new WebhookEndpointList(slice.data(), slice.hasMore()));
    }

    @GET
    @Path("/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookEndpointView> get(@RestPath String id) {
        return endpoints.get(merchantId(), PathParams.uuid(id));
    }

    @DELETE
    @Path("/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookEndpointView> delete(@RestPath String id) {
        return endpoints.delete(merchantId(), PathParams.uuid(id));
    }

    @POST
    @Path("/{id}/enable")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<WebhookEndpointView> enable(@RestPath String id) {
        return endpoints.enable(merchantId(), PathParams.uuid(id));
    }

    @POST
    @Path("/{id}/rotate_secret")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<WebhookEndpointView>> rotateSecret(@RestPath String id) {
        return endpoints
                .rotateSecret(merchantId(), PathParams.uuid(id))
                .map(rotated -> withSecret(RestResponse.Status.OK, rotated));
    }

    @GET
    @Path("/{id}/deliveries")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<DeliveryList> deliveries(@RestPath String id, HttpServerRequest request) {
        UUID endpointId = PathParams.uuid(id);
        Page page = Page.of(request);
        return endpoints
                .deliveries(merchantId(), endpointId, page)
                .map(slice -> new DeliveryList(slice.data(), slice.hasMore()));
    }

    /** An answer that shows a secret: never stored by a cache on the way. */
    private static RestResponse<WebhookEndpointView> withSecret(RestResponse.Status status, WebhookEndpointView view) {
        return RestResponse.ResponseBuilder.create(status, view)
                .header("Cache-Control", "no-store")
                .build();
    }

    private UUID merchantId() {
        return MerchantPrincipal.of(identity).id();
    }
}
