package com.payments.api.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * The PSP protocol of docs/architecture.md §5 (base URL {@code psp.url}). Error statuses come back as responses, not
 * exceptions ({@code quarkus.rest-client.disable-default-mapper}), so {@link PspGateway} decides what each means.
 * Use it through {@link PspGateway} (charges) and {@link PspChargeLookup} (lookups), which add the timeout and the
 * circuit breaker, under the instance's {@link com.payments.psp.PspConcurrencyLimit}.
 */
@RegisterRestClient(configKey = "psp")
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public interface PspClient {

    @POST
    @Path("/charges")
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> charge(@HeaderParam("Idempotency-Key") String idempotencyKey, PspChargeRequest body);

    /** The charge as the PSP reports it, every field kept (the resolver compares its amount and currency). */
    @GET
    @Path("/charges")
    Uni<RestResponse<JsonNode>> chargeByReference(@QueryParam("reference") String reference);
}
