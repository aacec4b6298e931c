package com.payments.api.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.api.Merchant;
import com.payments.api.RefundAccepted;
import com.payments.api.config.ApiConfig;
import com.payments.api.config.RefundConfig;
import com.payments.api.repository.OutboxRepository;
import com.payments.api.repository.RefundRepository;
import com.payments.api.repository.RefundRepository.Reserved;
import com.payments.api.rest.ApiProblem;
import com.payments.api.service.IdempotencyService.Claim;
import com.payments.contracts.Topics;
import com.payments.contracts.events.RefundRequested;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /v1/payments/{id}/refunds} (design.md §3): in ONE transaction claim the idempotency key, reserve the
 * amount with the conditional update of the payment, insert the PENDING refund and its {@code refund-commands}
 * outbox row, and complete the key with the 202 answer. refunds-worker executes the refund (docs/refunds.md).
 *
 * <p>A refused reservation (404, 409 {@code payment_outcome_pending}, 422 {@code payment_not_refundable} or {@code
 * refund_exceeds_refundable}) rolls the whole transaction back, key included: nothing is stored, and the same key may
 * be sent again once the payment allows it.
 */
@ApplicationScoped
public class RefundService {
    public static final String RESOURCE_REFUND = "refund";

    private final Pool pool;
    private final IdempotencyService idempotency;
    private final RefundRepository refunds;
    private final OutboxRepository outbox;
    private final ObjectMapper mapper;
    private final int inFlightRetryAfterSeconds;
    private final int outcomePendingRetryAfterSeconds;

    public RefundService(
            Pool pool,
            IdempotencyService idempotency,
            RefundRepository refunds,
            OutboxRepository outbox,
            ObjectMapper mapper,
            ApiConfig apiConfig,
            RefundConfig config) {
        this.pool = pool;
        this.idempotency = idempotency;
        this.refunds = refunds;
        this.outbox = outbox;
        this.mapper = mapper;
        this.inFlightRetryAfterSeconds = apiConfig.idempotency().inFlightRetryAfterSeconds();
        this.outcomePendingRetryAfterSeconds = config.outcomePendingRetryAfterSeconds();
    }

    public Uni<ApiResponse> refund(
            Merchant merchant, UUID paymentId, String key, RefundRequest request, Map<String, String> traceHeaders) {
        byte[] hash = RequestHash.of("POST", path(paymentId), request.canonicalJson());
        UUID refundId = UUID.randomUUID();
        return pool.withTransaction(conn -> idempotency
                .claim(conn, merchant.id(), key, hash, RESOURCE_REFUND, refundId)
                .flatMap(claim -> {
                    if (claim instanceof Claim.Claimed) {
                        return reserve(conn, merchant, paymentId, refundId, request, traceHeaders);
                    }
                    if (claim instanceof Claim.Completed completed) {
                        // refunds are stored only as their final 202: replay it byte for byte
                        return Uni.createFrom().item(new ApiResponse(completed.status(), completed.body(), true));
                    }
                    return Uni.createFrom().failure(IdempotencyService.problemFor(claim, inFlightRetryAfterSeconds));
                }));
    }

    /** The request path as the hash covers it, so a payment's key reused here is a different request (422). */
    static String path(UUID paymentId) {
        return "/v1/payments/" + paymentId + "/refunds";
    }

    private Uni<ApiResponse> reserve(
            SqlClient conn,
            Merchant merchant,
            UUID paymentId,
            UUID refundId,
            RefundRequest request,
            Map<String, String> traceHeaders) {
        return refunds.reserve(conn, merchant.id(), paymentId, request.amount()).flatMap(reserved -> {
            if (reserved == null) {
                return refunds.paymentStatus(conn, merchant.id(), paymentId)
                        .flatMap(status -> Uni.createFrom().failure(refused(status)));
            }
            return refunds.insertPending(
                            conn,
                            refundId,
                            paymentId,
                            merchant.id(),
                            request.amount(),
                            reserved.currency(),
                            request.reason())
                    .flatMap(
                            v -> command(conn, merchant, paymentId, refundId, request.amount(), reserved, traceHeaders))
                    .flatMap(v -> {
                        byte[] body = json(new RefundAccepted(refundId, paymentId, request.amount(), "PENDING"));
                        return idempotency
                                .complete(conn, RESOURCE_REFUND, refundId, 202, body)
                                .replaceWith(new ApiResponse(202, body, false));
                    });
        });
    }

    /** The refund-commands outbox row; key = payment id (one payment per transaction, see the V10 trigger). */
    private Uni<Void> command(
            SqlClient conn,
            Merchant merchant,
            UUID paymentId,
            UUID refundId,
            long amount,
            Reserved reserved,
            Map<String, String> traceHeaders) {
        RefundRequested event = RefundRequested.of(
                refundId, paymentId, merchant.id(), amount, reserved.currency(), reserved.pspReference());
        return outbox.insert(
                conn,
                event.eventId(),
                event.type(),
                Topics.REFUND_COMMANDS,
                paymentId.toString(),
                new String(json(event), StandardCharsets.UTF_8),
                new String(json(traceHeaders), StandardCharsets.UTF_8));
    }

    /** Why the conditional update changed no row, read in the same transaction. */
    private ApiProblem refused(String status) {
        if (status == null) {
            return ApiProblem.notFound();
        }
        return switch (status) {
            case "CAPTURED" ->
                new ApiProblem(
                        422,
                        "refund_exceeds_refundable",
                        "Refund exceeds refundable amount",
                        "The amount is more than what is left to refund on this payment",
                        null);
            case "UNKNOWN", "PROCESSING" ->
                new ApiProblem(
                        409,
                        "payment_outcome_pending",
                        "Payment outcome pending",
                        "The payment's outcome at the payment provider is not known yet; retry after Retry-After",
                        outcomePendingRetryAfterSeconds);
            default ->
                new ApiProblem(
                        422,
                        "payment_not_refundable",
                        "Payment not refundable",
                        "Only a captured payment can be refunded",
                        null);
        };
    }

    private byte[] json(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "Cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }
}
