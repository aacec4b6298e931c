package com.payments.api.rest;

import com.payments.api.RefundAccepted;
import com.payments.api.config.ApiConfig;
import com.payments.api.service.IdempotencyService;
import com.payments.api.service.MerchantAuthService;
import com.payments.api.service.RateLimiter;
import com.payments.api.service.RefundRequest;
import com.payments.api.service.RefundService;
import com.payments.api.service.TraceContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/** {@code POST /v1/payments/{id}/refunds} (design.md §4, docs/api.md): reserve a refund, 202 while it executes. */
@Path("/v1/payments/{id}/refunds")
@Tag(name = "refunds")
@SecurityRequirement(name = "merchantKey")
public class RefundResource {
    private final MerchantAuthService auth;
    private final RateLimiter rateLimiter;
    private final RefundService refunds;
    private final int maxBodyBytes;

    public RefundResource(MerchantAuthService auth, RateLimiter rateLimiter, RefundService refunds, ApiConfig config) {
        this.auth = auth;
        this.rateLimiter = rateLimiter;
        this.refunds = refunds;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** The refund request body, for the OpenAPI document. */
    @Schema(name = "RefundRequest")
    record RefundBody(
            @Schema(minimum = "1", maximum = "1000000000000", example = "500") long amount,
            @Schema(maxLength = RefundRequest.MAX_REASON_LENGTH, example = "customer request") String reason) {}

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Refund (part of) a captured payment (idempotent by Idempotency-Key)")
    @RequestBody(content = @Content(schema = @Schema(implementation = RefundBody.class)))
    @APIResponse(
            responseCode = "202",
            description = "Reserved; refunds-worker executes it at the PSP. Poll GET /v1/refunds/{refundId}",
            content = @Content(schema = @Schema(implementation = RefundAccepted.class)),
            headers = @Header(name = "Idempotent-Replayed", description = "true on a replay"))
    @APIResponse(
            responseCode = "400",
            description = "Invalid body or Idempotency-Key (not stored)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "401",
            description = "Missing or unknown API key",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "404",
            description = "No such payment for this merchant (not stored)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "409",
            description = "idempotency_key_in_use: a request with this key is in flight; payment_outcome_pending: the"
                    + " payment is UNKNOWN/PROCESSING (Retry-After; not stored)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "422",
            description = "refund_exceeds_refundable, payment_not_refundable (not stored), or idempotency_key_reused",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "Merchant over its rate (Retry-After; not stored)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<RestResponse<byte[]>> refund(
            @RestHeader("Authorization") String authorization,
            @Parameter(required = true, schema = @Schema(type = SchemaType.STRING, maxLength = 255))
                    @RestHeader("Idempotency-Key")
                    String idempotencyKey,
            @RestHeader("traceparent") String traceparent,
            @RestHeader("tracestate") String tracestate,
            @RestPath String id,
            @Context HttpServerRequest http,
            byte[] body) {
        return auth.authenticate(authorization, http.remoteAddress()).flatMap(merchant -> {
            rateLimiter.acquire(merchant);
            String key = IdempotencyService.validateKey(idempotencyKey);
            RefundRequest request = RefundRequest.parse(body, maxBodyBytes);
            return refunds.refund(
                            merchant,
                            PaymentResource.uuidOr404(id),
                            key,
                            request,
                            TraceContext.headers(traceparent, tracestate))
                    .map(PaymentResource::toResponse);
        });
    }
}
