package com.payments.api.capture;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.payments.api.PaymentView;
import com.payments.api.RefundView;
import com.payments.api.common.CardNumbers;
import com.payments.api.common.JsonBodies;
import com.payments.api.common.Page;
import com.payments.api.common.Refusal;
import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.merchants.ApiRoles;
import com.payments.api.merchants.MerchantPrincipal;
import com.payments.api.merchants.RateLimited;
import com.payments.api.payment.AmountLimits;
import com.payments.api.rest.IdempotentResponses;
import com.payments.api.rest.PathParams;
import com.payments.contracts.tracing.TraceHeaders;
import io.quarkus.security.identity.SecurityIdentity;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.jboss.resteasy.reactive.RestHeader;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * The merchant API of docs/architecture.md §4 (docs/api.md): capture and reads. Every call is a merchant's
 * ({@link BearerAuthMechanism}, rate-limited by {@link com.payments.api.merchants.RateLimitFilter}); here: validate,
 * then act.
 */
@Path("/v1")
@RolesAllowed(ApiRoles.MERCHANT)
@RateLimited
public class PaymentResource {
    private static final Pattern ORDER_ID = Pattern.compile("[\\x20-\\x7E]{1,255}");

    private final SecurityIdentity identity;
    private final CaptureService captures;
    private final ManualCaptureService manualCaptures;
    private final PaymentQueryService queries;
    private final StoredAnswers answers;
    private final TraceHeaders traceHeaders;
    private final int maxBodyBytes;

    public PaymentResource(
            SecurityIdentity identity,
            CaptureService captures,
            ManualCaptureService manualCaptures,
            PaymentQueryService queries,
            StoredAnswers answers,
            TraceHeaders traceHeaders,
            ApiConfig config) {
        this.identity = identity;
        this.captures = captures;
        this.manualCaptures = manualCaptures;
        this.queries = queries;
        this.answers = answers;
        this.traceHeaders = traceHeaders;
        this.maxBodyBytes = config.limits().maxBodyBytes();
    }

    @POST
    @Path("/payments")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> capture(@RestHeader("Idempotency-Key") String idempotencyKey, byte[] body) {
        String key = IdempotencyService.validateKey(idempotencyKey);
        CaptureRequest request = CaptureRequest.parse(body, maxBodyBytes);
        return captures.capture(MerchantPrincipal.of(identity), key, request, traceHeaders.current())
                .map(this::answer);
    }

    /**
     * Captures a manual payment's authorization, all of it or {@code {"amount": n}} (docs/api.md "Manual capture"). The
     * body may be left out, empty, {@code {}} or {@code null}.
     */
    @POST
    @Path("/payments/{id}/capture")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> captureAuthorization(
            @RestPath String id, @RestHeader("Idempotency-Key") String idempotencyKey, byte[] body) {
        UUID paymentId = PathParams.uuid(id);
        String key = IdempotencyService.validateKey(idempotencyKey);
        Long amount = JsonBodies.integer(
                JsonBodies.parseOptionalObject(body, maxBodyBytes, Set.of("amount")),
                "amount",
                AmountLimits.MIN,
                AmountLimits.MAX,
                false,
                "invalid_amount");
        return manualCaptures
                .capture(MerchantPrincipal.of(identity), key, paymentId, amount, traceHeaders.current())
                .map(this::answer);
    }

    /** Voids a manual payment's authorization (docs/api.md "Manual capture"). The body may be left out, {@code {}} or {@code null}. */
    @POST
    @Path("/payments/{id}/cancel")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<byte[]>> cancelAuthorization(
            @RestPath String id, @RestHeader("Idempotency-Key") String idempotencyKey, byte[] body) {
        UUID paymentId = PathParams.uuid(id);
        String key = IdempotencyService.validateKey(idempotencyKey);
        JsonBodies.parseOptionalObject(body, maxBodyBytes, Set.of());
        return manualCaptures
                .cancel(MerchantPrincipal.of(identity), key, paymentId, traceHeaders.current())
                .map(this::answer);
    }

    private RestResponse<byte[]> answer(CaptureOutcome outcome) {
        if (outcome instanceof CaptureOutcome.Replayed replayed) {
            return IdempotentResponses.replay(replayed.answer());
        }
        if (outcome instanceof CaptureOutcome.Answered answered) {
            return IdempotentResponses.first(answered.answer());
        }
        return IdempotentResponses.first(answers.payment(((CaptureOutcome.Charged) outcome).payment()));
    }

    @GET
    @Path("/payments/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<PaymentView> payment(@RestPath String id) {
        return queries.payment(MerchantPrincipal.of(identity), PathParams.uuid(id));
    }

    /** A page of payments, newest first, and whether older ones follow (newer ones, for {@code ending_before}). */
    public record PaymentList(List<PaymentView> data, @JsonProperty("has_more") boolean hasMore) {}

    /** A page of refunds, as {@link PaymentList}. */
    public record RefundList(List<RefundView> data, @JsonProperty("has_more") boolean hasMore) {}

    /** The merchant's payments, of one order if {@code orderId} is given (docs/api.md "Lists"). */
    @GET
    @Path("/payments")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<PaymentList> payments(HttpServerRequest request) {
        // read from the request itself: @RestQuery gives null for an empty value (?orderId=), which is refused here
        String orderId = request.getParam("orderId");
        if (orderId != null && !ORDER_ID.matcher(orderId).matches()) {
            throw Refusal.invalid(
                    "invalid_order_id", "Query parameter orderId must be 1-255 printable ASCII characters");
        }
        if (orderId != null && CardNumbers.containedIn(orderId)) {
            throw Refusal.invalid(
                    "card_data_rejected",
                    "orderId contains what looks like a card number; card data is never accepted");
        }
        Page page = Page.of(request);
        return queries.payments(MerchantPrincipal.of(identity), orderId, page)
                .map(slice -> new PaymentList(slice.data(), slice.hasMore()));
    }

    /** The merchant's refunds, of one payment if {@code paymentId} is given (docs/api.md "Lists"). */
    @GET
    @Path("/refunds")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RefundList> refunds(HttpServerRequest request) {
        String paymentId = request.getParam("paymentId");
        UUID payment =
                paymentId == null ? null : Page.id(paymentId, "invalid_payment_id", "paymentId must be a payment id");
        Page page = Page.of(request);
        return queries.refunds(MerchantPrincipal.of(identity), payment, page)
                .map(slice -> new RefundList(slice.data(), slice.hasMore()));
    }

    @GET
    @Path("/refunds/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<RefundView> refund(@RestPath String id) {
        return queries.refund(MerchantPrincipal.of(identity), PathParams.uuid(id));
    }
}
