package com.payments.api.capture;

import com.payments.api.PaymentView;
import com.payments.api.RefundView;
import com.payments.api.common.CardNumbers;
import com.payments.api.common.Refusal;
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
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.regex.Pattern;
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
import org.jboss.resteasy.reactive.RestQuery;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * The merchant API of docs/architecture.md §4 (docs/api.md): capture and reads. Every call is a merchant's
 * ({@link BearerAuthMechanism}, rate-limited by {@link com.payments.api.merchants.RateLimitFilter}); here: validate,
 * then act.
 */
@Path("/v1")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
@Tag(name = "payments")
@SecurityRequirement(name = "merchantKey")
public class PaymentResource {
    private static final Pattern ORDER_ID = Pattern.compile("[\\x20-\\x7E]{1,255}");

    private final SecurityIdentity identity;
    private final CaptureService captures;
    private final PaymentQueryService queries;
    private final StoredAnswers answers;
    private final TraceHeaders traceHeaders;
    private final int maxBodyBytes;

    public PaymentResource(
            SecurityIdentity identity,
            CaptureService captures,
            PaymentQueryService queries,
            StoredAnswers answers,
            TraceHeaders traceHeaders,
            ApiConfig config) {
        this.identity = identity;
        this.captures = captures;
        this.queries = queries;
        this.answers = answers;
        this.traceHeaders = traceHeaders;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    /** The capture request body, for the OpenAPI document. */
    @Schema(name = "CaptureRequest", additionalProperties = Schema.False.class)
    record CaptureBody(
            @Schema(
                            required = true,
                            minLength = 1,
                            maxLength = 255,
                            description = "Your order reference, 1-255 printable ASCII characters",
                            example = "order-1001")
                    String orderId,
            @Schema(
                            required = true,
                            minimum = "1",
                            maximum = "1000000000000",
                            description = "Amount in minor units of the currency (2500 = 25.00 EUR); a JSON integer",
                            example = "2500")
                    long amount,
            @Schema(
                            required = true,
                            description = "ISO 4217 code with a minor unit",
                            pattern = "^[A-Z]{3}$",
                            example = "EUR")
                    String currency,
            @Schema(
                            required = true,
                            description = "A PSP card token (card numbers are refused with card_data_rejected)",
                            pattern = "^tok_[A-Za-z0-9_]{1,100}$",
                            example = "tok_visa")
                    String source) {}

    static final String CAPTURED_EXAMPLE =
            "{\"id\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\",\"orderId\":\"order-1004\","
                    + "\"amount\":2500,\"currency\":\"EUR\",\"status\":\"CAPTURED\",\"refundedAmount\":0,"
                    + "\"refundableAmount\":2500,\"pspReference\":\"ch_22d933c44c85887691fb177d\","
                    + "\"createdAt\":\"2026-12-01T18:19:39.609481Z\",\"refunds\":[]}";
    static final String UNKNOWN_EXAMPLE = "{\"id\":\"74b37373-726d-4ab8-acab-f4b5557a47db\",\"orderId\":\"order-1001\","
            + "\"amount\":2500,\"currency\":\"EUR\",\"status\":\"UNKNOWN\",\"refundedAmount\":0,"
            + "\"refundableAmount\":0,\"createdAt\":\"2026-12-01T18:18:56.842904Z\",\"refunds\":[]}";
    static final String DECLINED_EXAMPLE =
            "{\"id\":\"55cb0e05-d561-4eab-9cdd-44fb73e4fcec\",\"orderId\":\"order-1005\","
                    + "\"amount\":2500,\"currency\":\"EUR\",\"status\":\"FAILED\",\"declineCode\":\"card_declined\","
                    + "\"refundedAmount\":0,\"refundableAmount\":0,\"pspReference\":\"ch_12b008613fabb84f4d59e642\","
                    + "\"createdAt\":\"2026-12-01T18:19:40.846614Z\",\"refunds\":[]}";
    static final String PAYMENT_EXAMPLE = "{\"id\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\",\"orderId\":\"order-1004\","
            + "\"amount\":2500,\"currency\":\"EUR\",\"status\":\"CAPTURED\",\"refundedAmount\":1000,"
            + "\"refundableAmount\":1500,\"pspReference\":\"ch_22d933c44c85887691fb177d\","
            + "\"createdAt\":\"2026-12-01T18:19:39.609481Z\",\"refunds\":[{\"id\":\"b117eb3b-358d-4986-a733-058c66da8118\","
            + "\"paymentId\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\",\"amount\":1000,"
            + "\"status\":\"SUCCEEDED\",\"createdAt\":\"2026-12-01T18:19:46.453338Z\"}]}";
    static final String PAYMENT_LIST_EXAMPLE =
            "{\"data\":[{\"id\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\",\"orderId\":\"order-1004\","
                    + "\"amount\":2500,\"currency\":\"EUR\",\"status\":\"CAPTURED\",\"refundedAmount\":1000,"
                    + "\"refundableAmount\":1500,\"pspReference\":\"ch_22d933c44c85887691fb177d\","
                    + "\"createdAt\":\"2026-12-01T18:19:39.609481Z\"}]}";
    static final String REFUND_EXAMPLE =
            "{\"id\":\"b117eb3b-358d-4986-a733-058c66da8118\",\"paymentId\":\"b7bf60f8-1344-4506-bd0c-2849fc94b978\","
                    + "\"amount\":1000,\"status\":\"SUCCEEDED\",\"createdAt\":\"2026-12-01T18:19:46.453338Z\"}";

    @POST
    @Path("/payments")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "createPayment",
            summary = "Create and capture a payment (idempotent by Idempotency-Key)",
            description = "Charges the card token through the PSP at most once per Idempotency-Key. Retry a request"
                    + " whose answer you did not get with the same key and the same body: you get the first answer"
                    + " again (Idempotent-Replayed: true) and no second charge. 201, 202 and 402 are stored for the"
                    + " key; problem answers are not (except that 422 leaves the first answer in place).")
    @RequestBody(
            required = true,
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = CaptureBody.class),
                            examples =
                                    @ExampleObject(
                                            name = "capture",
                                            value = "{\"orderId\":\"order-1001\",\"amount\":2500,\"currency\":"
                                                    + "\"EUR\",\"source\":\"tok_visa\"}")))
    @APIResponse(
            responseCode = "201",
            description = "Captured (status CAPTURED), first answer or replay",
            headers = @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed"),
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = PaymentView.class),
                            examples = @ExampleObject(name = "captured", value = CAPTURED_EXAMPLE)))
    @APIResponse(
            responseCode = "202",
            description = "The PSP's answer was lost (status UNKNOWN): the resolver settles it with the PSP. Poll GET"
                    + " /v1/payments/{id}, or send the same request with the same key: it answers the current state",
            headers = @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed"),
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = PaymentView.class),
                            examples = @ExampleObject(name = "unknown", value = UNKNOWN_EXAMPLE)))
    @APIResponse(
            responseCode = "400",
            description = "The body or the Idempotency-Key is invalid; nothing stored. Codes:"
                    + " missing_idempotency_key, invalid_idempotency_key, invalid_json, unknown_field, body_too_large"
                    + " (over 16 KiB), invalid_order_id, invalid_amount, invalid_currency, invalid_source,"
                    + " card_data_rejected, bad_request",
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
                                @ExampleObject(
                                        name = "invalid_order_id",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_order_id\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"orderId must be 1-255"
                                                + " printable ASCII characters\",\"code\":\"invalid_order_id\"}"),
                                @ExampleObject(name = "invalid_amount", value = ApiDefinition.INVALID_AMOUNT),
                                @ExampleObject(
                                        name = "invalid_currency",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_currency\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"currency must be a known"
                                                + " ISO 4217 code such as EUR\",\"code\":\"invalid_currency\"}"),
                                @ExampleObject(
                                        name = "invalid_source",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_source\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"source must be a PSP"
                                                + " token such as tok_visa\",\"code\":\"invalid_source\"}"),
                                @ExampleObject(
                                        name = "card_data_rejected",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "card_data_rejected\",\"title\":"
                                                + "\"Bad request\",\"status\":400,\"detail\":\"source must be a PSP"
                                                + " token; card numbers are never accepted\",\"code\":"
                                                + "\"card_data_rejected\"}")
                            }))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(
            responseCode = "402",
            description = "Declined by the PSP (status FAILED, declineCode). Stored for the key: a new attempt needs a"
                    + " new key",
            headers = @Header(name = "Idempotent-Replayed", ref = "IdempotentReplayed"),
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = PaymentView.class),
                            examples = @ExampleObject(name = "declined", value = DECLINED_EXAMPLE)))
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(
            responseCode = "409",
            description = "`idempotency_key_in_use`: the first request with this key is still running; retry the same"
                    + " request after Retry-After. Not stored",
            headers = @Header(name = "Retry-After", ref = "RetryAfter"),
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "idempotency_key_in_use",
                                            value = ApiDefinition.IDEMPOTENCY_KEY_IN_USE)))
    @APIResponse(responseCode = "413", ref = "PayloadTooLarge")
    @APIResponse(responseCode = "415", ref = "UnsupportedMediaType")
    @APIResponse(
            responseCode = "422",
            description = "`idempotency_key_reused`: this key was used with a different request (another body); the"
                    + " first request's answer stays. Use a new key for a new request",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "idempotency_key_reused",
                                            value = ApiDefinition.IDEMPOTENCY_KEY_REUSED)))
    @APIResponse(responseCode = "429", ref = "RateLimited")
    @APIResponse(responseCode = "500", ref = "InternalError")
    @APIResponse(
            responseCode = "503",
            description = "`psp_unavailable`: the PSP was not called (circuit open, overloaded, unreachable): nothing"
                    + " charged, the key is released; `service_overloaded`: the service is at capacity, nothing"
                    + " stored. Retry with the same key after Retry-After",
            headers = @Header(name = "Retry-After", ref = "RetryAfter"),
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples = {
                                @ExampleObject(
                                        name = "psp_unavailable",
                                        value = "{\"type\":\"" + ApiDefinition.TYPE + "psp_unavailable\",\"title\":"
                                                + "\"Payment provider unavailable\",\"status\":503,\"detail\":\"The"
                                                + " payment provider cannot be reached; nothing was charged. Retry with"
                                                + " the same Idempotency-Key\",\"code\":\"psp_unavailable\"}"),
                                @ExampleObject(name = "service_overloaded", value = ApiDefinition.SERVICE_OVERLOADED)
                            }))
    public Uni<RestResponse<byte[]>> capture(
            @Parameter(ref = "Idempotency-Key") @RestHeader("Idempotency-Key") String idempotencyKey,
            // Read by the OpenTelemetry server instrumentation (the request's span continues the caller's trace),
            // declared here for the API document only.
            @Parameter(ref = "traceparent") @RestHeader("traceparent") String traceparent,
            @Parameter(ref = "tracestate") @RestHeader("tracestate") String tracestate,
            byte[] body) {
        String key = IdempotencyService.validateKey(idempotencyKey);
        CaptureRequest request = CaptureRequest.parse(body, maxBodyBytes);
        return captures.capture(MerchantPrincipal.of(identity), key, request, traceHeaders.current())
                .map(outcome -> outcome instanceof CaptureOutcome.Replayed replayed
                        ? IdempotentResponses.replay(replayed.answer())
                        : IdempotentResponses.first(answers.payment(((CaptureOutcome.Charged) outcome).payment())));
    }

    @GET
    @Path("/payments/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "getPayment",
            summary = "A payment with its refunds",
            description = "refundedAmount counts PENDING and SUCCEEDED refunds; refundableAmount is what is left")
    @APIResponse(
            responseCode = "200",
            description = "The payment",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = PaymentView.class),
                            examples = @ExampleObject(name = "refunded", value = PAYMENT_EXAMPLE)))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "404", ref = "NotFound")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "429", ref = "RateLimited")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<PaymentView> payment(
            @Parameter(description = "The payment's id", schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                    @RestPath
                    String id) {
        return queries.payment(MerchantPrincipal.of(identity), PathParams.uuid(id));
    }

    /** Payments of an order, newest first (at most 100). */
    public record PaymentList(List<PaymentView> data) {}

    @GET
    @Path("/payments")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "listPaymentsByOrderId",
            summary = "The merchant's payments for an orderId, newest first (at most 100, without refunds)")
    @APIResponse(
            responseCode = "200",
            description = "The payments (possibly none)",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = PaymentList.class),
                            examples = @ExampleObject(name = "one payment", value = PAYMENT_LIST_EXAMPLE)))
    @APIResponse(
            responseCode = "400",
            description = "`invalid_order_id`: orderId missing or not 1-255 printable ASCII characters;"
                    + " `card_data_rejected`: orderId holds a card number",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "invalid_order_id",
                                            value = "{\"type\":\"" + ApiDefinition.TYPE
                                                    + "invalid_order_id\",\"title\":"
                                                    + "\"Bad request\",\"status\":400,\"detail\":\"Query parameter"
                                                    + " orderId must be 1-255 printable ASCII characters\",\"code\":"
                                                    + "\"invalid_order_id\"}")))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "429", ref = "RateLimited")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<PaymentList> byOrderId(
            @Parameter(
                            required = true,
                            description = "Your order reference",
                            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 255),
                            example = "order-1001")
                    @RestQuery
                    String orderId) {
        if (orderId == null || !ORDER_ID.matcher(orderId).matches()) {
            throw Refusal.invalid(
                    "invalid_order_id", "Query parameter orderId must be 1-255 printable ASCII characters");
        }
        if (CardNumbers.containedIn(orderId)) {
            throw Refusal.invalid(
                    "card_data_rejected",
                    "orderId contains what looks like a card number; card data is never accepted");
        }
        return queries.byOrderId(MerchantPrincipal.of(identity), orderId).map(PaymentList::new);
    }

    @GET
    @Path("/refunds/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "getRefund",
            summary = "A refund",
            description = "status: PENDING until the PSP settles it, then SUCCEEDED or FAILED (a failed refund gives"
                    + " its amount back to the payment's refundableAmount)")
    @APIResponse(
            responseCode = "200",
            description = "The refund",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = RefundView.class),
                            examples = @ExampleObject(name = "succeeded", value = REFUND_EXAMPLE)))
    @APIResponse(responseCode = "401", ref = "Unauthorized")
    @APIResponse(responseCode = "404", ref = "NotFound")
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "429", ref = "RateLimited")
    @APIResponse(responseCode = "500", ref = "InternalError")
    public Uni<RefundView> refund(
            @Parameter(description = "The refund's id", schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                    @RestPath
                    String id) {
        return queries.refund(MerchantPrincipal.of(identity), PathParams.uuid(id));
    }
}
