package com.payments.sandbox.rest;

import com.payments.sandbox.CaptureRequest;
import com.payments.sandbox.ChargeRequest;
import com.payments.sandbox.RefundRequest;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.RefundRequestLog;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * The PSP protocol of docs/architecture.md §5 (charges and refunds, idempotent by {@code Idempotency-Key}) and its
 * authorizations with their capture or void (docs/psp-sandbox.md), on the event loop. {@code POST /v1/charges} is
 * served by {@link ChargeRoute}, a plain Vert.x route, for throughput.
 */
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public class PspResource {

    private final PspService psp;
    private final FaultSettings faults;
    private final RefundRequestLog refundLog;

    public PspResource(PspService psp, FaultSettings faults, RefundRequestLog refundLog) {
        this.psp = psp;
        this.faults = faults;
        this.refundLog = refundLog;
    }

    @GET
    @Path("/charges")
    public Uni<RestResponse<byte[]>> chargeByReference(@RestQuery String reference) {
        return Replies.respond(psp.chargeByReference(reference), faults);
    }

    @POST
    @Path("/authorizations")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> authorize(@RestHeader("Idempotency-Key") String key, ChargeRequest body) {
        return Replies.respond(psp.authorize(key, body), faults);
    }

    @POST
    @Path("/charges/{id}/capture")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> capture(
            @RestHeader("Idempotency-Key") String key, @PathParam("id") String id, CaptureRequest body) {
        return Replies.respond(psp.capture(key, id, body), faults);
    }

    @POST
    @Path("/charges/{id}/void")
    public Uni<RestResponse<byte[]>> voidAuthorization(
            @RestHeader("Idempotency-Key") String key, @PathParam("id") String id) {
        return Replies.respond(psp.voidAuthorization(key, id), faults);
    }

    @POST
    @Path("/refunds")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> refund(@RestHeader("Idempotency-Key") String key, RefundRequest body) {
        RefundRequestLog.Request logged = refundLog.received(body == null ? null : body.reference());
        return Replies.respond(psp.refund(key, body), faults)
                .onTermination()
                .invoke((response, failure, cancelled) ->
                        refundLog.answered(logged, response == null ? 500 : response.getStatus()));
    }

    @GET
    @Path("/refunds")
    public Uni<RestResponse<byte[]>> refundByReference(@RestQuery String reference) {
        return Replies.respond(psp.refundByReference(reference), faults);
    }
}
