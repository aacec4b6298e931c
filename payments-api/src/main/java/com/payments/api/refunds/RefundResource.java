package com.payments.api.refunds;

import com.payments.api.RefundAccepted;
import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.rest.ApiDefinition;
import com.payments.api.rest.IdempotentResponses;
import com.payments.api.rest.PathParams;
import com.payments.api.rest.Problem;
import com.payments.api.rest.ProblemMapper;
import com.payments.contracts.tracing.TraceHeaders;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/** {@code POST /v1/payments/{id}/refunds} (docs/architecture.md §4, docs/api.md): reserve a refund, 202 while it executes. */
@Path("/v1/payments/{id}/refunds")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
@Tag(name = "refunds")
@SecurityRequirement(name = "merchantKey")
public class RefundResource {
    private final SecurityIdentity identity;
    private final RefundService refunds;
    private final StoredAnswers answers;
    private final TraceHeaders traceHeaders;
    private final int maxBodyBytes;

    public RefundResource(
            SecurityIdentity identity,
            RefundService refunds,
            StoredAnswers answers,
            TraceHeaders traceHeaders,
            ApiConfig config) {
        this.identity = identity;
        this.refunds = refunds;
        this.answers = answers;
        this.traceHeaders = traceHeaders;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** The refund request body, for the OpenAPI document. */
    @Schema(name = "RefundRequest", additionalProperties = Schema.False.class)
    record RefundBody(
            @Schema(
                            required = true,
                            minimum = "1",
                            maximum = "1000000000000",
                            description = "Amount in minor units of the payment's currency; at most refundableAmount",
                            example = "1000")
                    long amount,
            @Schema(
                            minLength = 1,
                            maxLength = RefundRequest.MAX_REASON_LENGTH,
                            description = "Optional note, stored on the refund (no control characters)",
                            example = "customer request")
                    String reason) {}

    static final String ACCEPTED_EXAMPLE =
            "{\"refundId\":\"b117eb3b-358d-4986-a733-058c66da8118\",\"paymentId\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\","
                    + "\"amount\":1000,\"status\":\"PENDING\"}";

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "createRefund",
            summary = "Refund (part of) a captured payment (idempotent by Idempotency-Key)",
            description = "Reserves the amount on the payment and answers 202 PENDING; the refund is then executed at"
                    + " the PSP. Poll GET /v1/refunds/{refundId} until SUCCEEDED or FAILED. Only the 202 is stored for"
                    + " the key: a refusal (404/409/422) changes nothing and the same key may be sent again.")
    @RequestBody(
            required = true,
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = RefundBody.class),
                            examples =
                                    @ExampleObject(
                                            name = "refund",
                                            value = "{\"amount\":1000,\"reason\":\"customer request\"}")))
    @APIResponse(
            responseCode = "202",
            description = "Reserved (status PENDING), first answer or replay",
            headers = @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed"),
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = RefundAccepted.class),
                            examples = @ExampleObject(name = "pending", value = ACCEPTED_EXAMPLE)))
    @APIResponse(
            responseCode = "400",
            description =
                    "The body or the Idempotency-Key is invalid; nothing stored. Codes:"
                            + " missing_idempotency_key, invalid_idempotency_key, invalid_json, unknown_field, body_too_large"
                            + " (over 16 KiB), invalid_amount, invalid_reason, card_data_rejected (a card number in reason), bad_request",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(
                                        name = "missing_idempotency_key",
                                        value = ApiDefinition.MISSING_IDEMPOTENCY_KEY),
                                @ExampleObject(
                                        name = "invalid_idempotency_key",
                                        value = ApiDefinition.INVALID_IDEMPOTENCY_KEY),
                                @ExampleObject(name = "invalid_json", value = ApiDefinition.INVALID_JSON),
                                @ExampleObject(name = "unknown_field", value = ApiDefinition.UNKNOWN_FIELD),
                                @ExampleObject(name = "body_too_large", value = ApiDefinition.BODY_TOO_LARGE),
                                @ExampleObject(name = "invalid_amount", value = ApiDefinition.INVALID_AMOUNT),
                                @ExampleObject(
                                        name = "invalid_reason",
                                        value =
                                                "{\"type\":\"" + ApiDefinition.TYPE + "invalid_reason\",\"title\":"
                                                        + "\"Bad request\",\"status\":400,\"detail\":\"reason must be 1-500"
                                                        + " characters without control characters\",\"code\":\"invalid_reason\"}")
                            }))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "404", ref = "NotFound")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(
            responseCode = "409",
            description = "`payment_outcome_pending`: the payment is UNKNOWN or PROCESSING, its outcome at the PSP is"
                    + " not known yet; `idempotency_key_in_use`: a request with this key is in flight. Retry after"
                    + " Retry-After; nothing stored",
            headers = @Header(name = "Retry-After", ref = "RetryAfter"),
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(
                                        name = "payment_outcome_pending",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "payment_outcome_pending\","
                                                + "\"title\":\"Payment outcome pending\",\"status\":409,\"detail\":"
                                                + "\"The payment's outcome at the payment provider is not known yet;"
                                                + " retry after Retry-After\",\"code\":\"payment_outcome_pending\"}"),
                                @ExampleObject(
                                        name = "idempotency_key_in_use",
                                        value = ApiDefinition.IDEMPOTENCY_KEY_IN_USE)
                            }))
    @APIResponse(responseCode = "413", ref = "PayloadTooLarge")
    @APIResponse(responseCode = "415", ref = "UnsupportedMediaType")
    @APIResponse(
            responseCode = "422",
            description = "`refund_exceeds_refundable`: more than refundableAmount; `payment_not_refundable`: the"
                    + " payment is FAILED (both not stored); `idempotency_key_reused`: the key was used with another"
                    + " request (the first answer stays)",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(
                                        name = "refund_exceeds_refundable",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "refund_exceeds_refundable\","
                                                + "\"title\":\"Refund exceeds refundable amount\",\"status\":422,"
                                                + "\"detail\":\"The amount is more than what is left to refund on this"
                                                + " payment\",\"code\":\"refund_exceeds_refundable\"}"),
                                @ExampleObject(
                                        name = "payment_not_refundable",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "payment_not_refundable\","
                                                + "\"title\":\"Payment not refundable\",\"status\":422,\"detail\":"
                                                + "\"Only a captured payment can be refunded\",\"code\":"
                                                + "\"payment_not_refundable\"}"),
                                @ExampleObject(
                                        name = "idempotency_key_reused",
                                        value = ApiDefinition.IDEMPOTENCY_KEY_REUSED)
                            }))
    @APIResponse(responseCode = "429", ref = "RateLimited")
    @APIResponse(responseCode = "500", ref = "InternalError")
    @APIResponse(
            responseCode = "503",
            description = "`service_overloaded`: the service is at capacity; nothing stored. Retry with the same key"
                    + " after Retry-After",
            headers = @Header(name = "Retry-After", ref = "RetryAfter"),
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "service_overloaded",
                                            value = ApiDefinition.SERVICE_OVERLOADED)))
    public Uni<RestResponse<byte[]>> refund(
            @Parameter(ref = "Idempotency-Key") @RestHeader("Idempotency-Key") String idempotencyKey,
            // Read by the OpenTelemetry server instrumentation (the request's span continues the caller's trace),
            // declared here for the API document only.
            @Parameter(ref = "traceparent") @RestHeader("traceparent") String traceparent,
            @Parameter(ref = "tracestate") @RestHeader("tracestate") String tracestate,
            @Parameter(description = "The payment's id", schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                    @RestPath
                    String id,
            byte[] body) {
        String key = IdempotencyService.validateKey(idempotencyKey);
        RefundRequest request = RefundRequest.parse(body, maxBodyBytes);
        return refunds.refund(MerchantPrincipal.of(identity), PathParams.uuid(id), key, request, traceHeaders.current())
                .map(outcome -> outcome instanceof RefundOutcome.Replayed replayed
                        ? IdempotentResponses.replay(replayed.answer())
                        : IdempotentResponses.first(
                                answers.refundAccepted(((RefundOutcome.Reserved) outcome).refund())));
    }
}
