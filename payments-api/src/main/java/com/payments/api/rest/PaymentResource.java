package com.payments.api.rest;

import com.payments.api.PaymentView;
import com.payments.api.RefundView;
import com.payments.api.config.ApiConfig;
import com.payments.api.service.ApiResponse;
import com.payments.api.service.CaptureRequest;
import com.payments.api.service.CaptureService;
import com.payments.api.service.CardNumbers;
import com.payments.api.service.IdempotencyService;
import com.payments.api.service.MerchantAuthService;
import com.payments.api.service.PaymentQueryService;
import com.payments.api.service.RateLimiter;
import com.payments.api.service.TraceContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
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
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

/** The merchant API of design.md §4 (docs/api.md). Every call: authenticate, rate-limit, validate, then act. */
@Path("/v1")
@Tag(name = "payments")
@SecurityRequirement(name = "merchantKey")
public class PaymentResource {
    private static final Pattern ORDER_ID = Pattern.compile("[\\x20-\\x7E]{1,255}");

    private final MerchantAuthService auth;
    private final RateLimiter rateLimiter;
    private final CaptureService captures;
    private final PaymentQueryService queries;
    private final int maxBodyBytes;

    public PaymentResource(
            MerchantAuthService auth,
            RateLimiter rateLimiter,
            CaptureService captures,
            PaymentQueryService queries,
            ApiConfig config) {
        this.auth = auth;
        this.rateLimiter = rateLimiter;
        this.captures = captures;
        this.queries = queries;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** The capture request body, for the OpenAPI document. */
    @Schema(name = "CaptureRequest")
    record CaptureBody(
            @Schema(maxLength = 255, example = "order-1001") String orderId,
            @Schema(minimum = "1", maximum = "1000000000000", example = "1999") long amount,
            @Schema(example = "EUR") String currency,
            @Schema(example = "tok_visa") String source) {}

    @POST
    @Path("/payments")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Create and capture a payment (idempotent by Idempotency-Key)")
    @RequestBody(content = @Content(schema = @Schema(implementation = CaptureBody.class)))
    @APIResponse(
            responseCode = "201",
            description = "Captured",
            content = @Content(schema = @Schema(implementation = PaymentView.class)),
            headers = @Header(name = "Idempotent-Replayed", description = "true on a replay"))
    @APIResponse(
            responseCode = "202",
            description = "Outcome at the PSP unknown yet (status UNKNOWN or PROCESSING); poll GET /v1/payments/{id}",
            content = @Content(schema = @Schema(implementation = PaymentView.class)))
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
            responseCode = "402",
            description = "Declined; the body is the FAILED payment (stored: a new attempt needs a new key)",
            content = @Content(schema = @Schema(implementation = PaymentView.class)))
    @APIResponse(
            responseCode = "409",
            description = "A request with this key is in flight (Retry-After)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "415",
            description = "Content-Type is not application/json",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "422",
            description = "This key was used with a different request",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "Merchant over its rate (Retry-After; not stored)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "503",
            description = "PSP unavailable, nothing charged (Retry-After; key released)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<RestResponse<byte[]>> capture(
            @RestHeader("Authorization") String authorization,
            @Parameter(required = true, schema = @Schema(type = SchemaType.STRING, maxLength = 255))
                    @RestHeader("Idempotency-Key")
                    String idempotencyKey,
            @RestHeader("traceparent") String traceparent,
            @RestHeader("tracestate") String tracestate,
            @Context HttpServerRequest http,
            byte[] body) {
        return auth.authenticate(authorization, http.remoteAddress()).flatMap(merchant -> {
            rateLimiter.acquire(merchant);
            String key = IdempotencyService.validateKey(idempotencyKey);
            CaptureRequest request = CaptureRequest.parse(body, maxBodyBytes);
            return captures.capture(merchant, key, request, TraceContext.headers(traceparent, tracestate))
                    .map(PaymentResource::toResponse);
        });
    }

    @GET
    @Path("/payments/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "A payment with its refunds")
    @APIResponse(responseCode = "200", description = "The payment")
    @APIResponse(
            responseCode = "401",
            description = "Missing or unknown API key",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "404",
            description = "No such payment for this merchant",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "Merchant over its rate (Retry-After)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<PaymentView> payment(
            @RestHeader("Authorization") String authorization, @RestPath String id, @Context HttpServerRequest http) {
        return auth.authenticate(authorization, http.remoteAddress()).flatMap(merchant -> {
            rateLimiter.acquire(merchant);
            return queries.payment(merchant, uuidOr404(id));
        });
    }

    /** Payments of an order, newest first (at most 100). */
    public record PaymentList(List<PaymentView> data) {}

    @GET
    @Path("/payments")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "The merchant's payments for an orderId, newest first (at most 100, without refunds)")
    @APIResponse(responseCode = "200", description = "The payments (possibly none)")
    @APIResponse(
            responseCode = "400",
            description = "orderId missing or invalid",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "401",
            description = "Missing or unknown API key",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "Merchant over its rate (Retry-After)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<PaymentList> byOrderId(
            @RestHeader("Authorization") String authorization,
            @RestQuery String orderId,
            @Context HttpServerRequest http) {
        return auth.authenticate(authorization, http.remoteAddress()).flatMap(merchant -> {
            rateLimiter.acquire(merchant);
            if (orderId == null || !ORDER_ID.matcher(orderId).matches()) {
                throw ApiProblem.badRequest(
                        "invalid_order_id", "Query parameter orderId must be 1-255 printable ASCII characters");
            }
            if (CardNumbers.containedIn(orderId)) {
                throw ApiProblem.badRequest(
                        "card_data_rejected",
                        "orderId contains what looks like a card number; card data is never accepted");
            }
            return queries.byOrderId(merchant, orderId).map(PaymentList::new);
        });
    }

    @GET
    @Path("/refunds/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "A refund")
    @APIResponse(responseCode = "200", description = "The refund")
    @APIResponse(
            responseCode = "401",
            description = "Missing or unknown API key",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "404",
            description = "No such refund for this merchant",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "Merchant over its rate (Retry-After)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<RefundView> refund(
            @RestHeader("Authorization") String authorization, @RestPath String id, @Context HttpServerRequest http) {
        return auth.authenticate(authorization, http.remoteAddress()).flatMap(merchant -> {
            rateLimiter.acquire(merchant);
            return queries.refund(merchant, uuidOr404(id));
        });
    }

    static UUID uuidOr404(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw ApiProblem.notFound();
        }
    }

    static RestResponse<byte[]> toResponse(ApiResponse response) {
        RestResponse.ResponseBuilder<byte[]> builder = RestResponse.ResponseBuilder.<byte[]>create(response.status())
                .entity(response.body())
                .type(MediaType.APPLICATION_JSON_TYPE);
        if (response.replayed()) {
            builder.header(IdempotencyService.REPLAYED_HEADER, "true");
        }
        return builder.build();
    }
}
