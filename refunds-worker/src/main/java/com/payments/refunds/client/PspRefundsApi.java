package com.payments.refunds.client;

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

/**
 * The PSP's refund calls (docs/architecture.md §5). Answers come back as raw responses whatever their status (the default
 * exception mapper is disabled): {@link PspClient} decides what each status means.
 */
@RegisterRestClient(configKey = "psp")
@Path("/v1/refunds")
@Produces(MediaType.APPLICATION_JSON)
public interface PspRefundsApi {

    /** Body of {@code POST /v1/refunds}. */
    record RefundBody(String reference, String charge, long amount) {}

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> create(@HeaderParam("Idempotency-Key") String idempotencyKey, RefundBody body);

    @GET
    Uni<Response> byReference(@QueryParam("reference") String reference);
}
