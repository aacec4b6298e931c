package com.payments.api.refunds;

import com.payments.api.Merchant;
import com.payments.api.RefundAccepted;
import com.payments.api.client.PspGateway;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.Json;
import com.payments.api.common.Refusal;
import com.payments.api.common.RequestHash;
import com.payments.api.config.ApiConfig;
import com.payments.api.config.RefundConfig;
import com.payments.api.idempotency.IdempotencyRepository;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.IdempotencyService.Claim;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.payment.AmountLimits;
import com.payments.api.refunds.RefundRepository.Found;
import com.payments.api.refunds.RefundRepository.Reservation;
import com.payments.contracts.Topics;
import com.payments.contracts.events.RefundRequested;
import com.payments.contracts.sql.DatabaseBusyException;
import com.payments.contracts.sql.StatementBatcher;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /v1/payments/{id}/refunds} (docs/architecture.md §3): read the payment and the key; then, in ONE statement,
 * reserve the amount with the conditional update of the payment, insert the PENDING refund and its {@code
 * refund-commands} outbox row, and store the key completed with the 202 answer ({@link RefundRepository#reserve}).
 * Concurrent reservations share that statement ({@link StatementBatcher}; two of one payment never share one).
 * refunds-worker executes the refund (docs/refunds.md).
 *
 * <p>A refused reservation ({@code not_found}, {@code payment_outcome_pending}, {@code payment_not_refundable} or {@code
 * refund_exceeds_refundable}, or {@code amount_not_supported_by_psp} for an amount the PSP cannot take in the
 * payment's currency) writes nothing, key included: the same key may be sent again once the payment allows
 * it. A key already used answers first: the stored answer (replay), or {@code idempotency_key_reused} for another
 * request under it. A reservation
 * whose statement does not start within {@code payments.capture.database-wait-budget} is shed: {@code
 * service_overloaded} with Retry-After, nothing written.
 */
@ApplicationScoped
public class RefundService {
    public static final String RESOURCE_REFUND = "refund";

    private final Pool pool;
    private final RefundRepository refunds;
    private final StoredAnswers answers;
    private final Json json;
    private final ApiMetrics metrics;
    private final PspGateway psp;
    private final int inFlightRetryAfterSeconds;
    private final int outcomePendingRetryAfterSeconds;
    private final int overloadedRetryAfterSeconds;
    private final StatementBatcher<Reservation, Boolean> reservations;

    public RefundService(
            Pool pool,
            RefundRepository refunds,
            StoredAnswers answers,
            Json json,
            ApiMetrics metrics,
            PspGateway psp,
            ApiConfig apiConfig,
            RefundConfig config) {
        this.pool = pool;
        this.refunds = refunds;
        this.answers = answers;
        this.json = json;
        this.metrics = metrics;
        this.psp = psp;
        this.inFlightRetryAfterSeconds = apiConfig.idempotency().inFlightRetryAfterSeconds();
        this.outcomePendingRetryAfterSeconds = config.outcomePendingRetryAfterSeconds();
        this.overloadedRetryAfterSeconds = apiConfig.psp().unavailableRetryAfterSeconds();
        this.reservations = new StatementBatcher<>(
                batch -> refunds.reserve(pool, batch),
                config.reservationMaxBatchSize(),
                config.reservationStatementsInFlight(),
                metrics.refundReservationBatchSizes(),
                apiConfig.capture().databaseWaitBudget(),
                Reservation::paymentId);
    }

    public Uni<RefundOutcome> refund(
            Merchant merchant, UUID paymentId, String key, RefundRequest request, Map<String, String> traceHeaders) {
        byte[] hash = RequestHash.of("POST", path(paymentId), request.canonicalJson());
        return refunds.find(pool, merchant.id(), paymentId, key).flatMap(found -> {
            if (found.key() != null) {
                return answerToUsedKey(IdempotencyService.classify(found.key(), hash));
            }
            if (!"CAPTURED".equals(found.paymentStatus())) {
                return Uni.createFrom().failure(refused(found.paymentStatus()));
            }
            AmountLimits.requireTakenByPsp(psp.refusal(request.amount(), found.currency()));
            return reserve(merchant, paymentId, key, hash, request, found, traceHeaders);
        });
    }

    /** The request path as the hash covers it, so a payment's key reused here is a different request. */
    static String path(UUID paymentId) {
        return "/v1/payments/" + paymentId + "/refunds";
    }

    private Uni<RefundOutcome> reserve(
            Merchant merchant,
            UUID paymentId,
            String key,
            byte[] hash,
            RefundRequest request,
            Found payment,
            Map<String, String> traceHeaders) {
        UUID refundId = UUID.randomUUID();
        RefundRequested event = RefundRequested.of(
                refundId,
                paymentId,
                merchant.id(),
                request.amount(),
                payment.currency(),
                payment.pspReference(),
                request.metadata());
        RefundAccepted accepted =
                new RefundAccepted(refundId, paymentId, request.amount(), "PENDING", request.metadata());
        return reservations
                .submit(new Reservation(
                        merchant.id(),
                        paymentId,
                        refundId,
                        request.amount(),
                        payment.currency(),
                        payment.pspReference(),
                        request.reason(),
                        request.metadata(),
                        json.outboxRow(Topics.REFUND_COMMANDS, event, traceHeaders),
                        key,
                        hash,
                        answers.refundAccepted(accepted).body()))
                .onFailure(IdempotencyRepository::isKeyTaken)
                .recoverWithItem(false)
                .onFailure(DatabaseBusyException.class)
                .transform(busy -> {
                    metrics.shed("database");
                    return Refusal.overloaded(overloadedRetryAfterSeconds);
                })
                .flatMap(reserved -> reserved
                        ? Uni.createFrom().item(new RefundOutcome.Reserved(accepted))
                        // lost a race: to a request with the same key, or to reservations that used up the amount
                        : refunds.find(pool, merchant.id(), paymentId, key)
                                .flatMap(now -> now.key() != null
                                        ? answerToUsedKey(IdempotencyService.classify(now.key(), hash))
                                        : Uni.createFrom().failure(refused(now.paymentStatus()))));
    }

    private Uni<RefundOutcome> answerToUsedKey(Claim claim) {
        if (claim instanceof Claim.Completed completed) {
            // refunds are stored only as their final answer: replay it byte for byte
            return Uni.createFrom().item(new RefundOutcome.Replayed(completed.answer()));
        }
        return Uni.createFrom().failure(IdempotencyService.refusalFor(claim, inFlightRetryAfterSeconds));
    }

    /** Why a reservation is refused, from the payment's status (null: no such payment for this merchant). */
    private Refusal refused(String status) {
        if (status == null) {
            return Refusal.notFound();
        }
        return switch (status) {
            case "CAPTURED" ->
                new Refusal(
                        Refusal.Kind.UNPROCESSABLE,
                        "refund_exceeds_refundable",
                        "Refund exceeds refundable amount",
                        "The amount is more than what is left to refund on this payment",
                        null);
            // a PSP call of the payment is pending (for a manual payment: its authorization, capture or void)
            case "UNKNOWN", "PROCESSING", "AUTHORIZING", "CAPTURING", "CANCELING", "EXPIRING" ->
                new Refusal(
                        Refusal.Kind.CONFLICT,
                        "payment_outcome_pending",
                        "Payment outcome pending",
                        "The payment's outcome at the payment provider is not known yet; retry after Retry-After",
                        outcomePendingRetryAfterSeconds);
            default ->
                new Refusal(
                        Refusal.Kind.UNPROCESSABLE,
                        "payment_not_refundable",
                        "Payment not refundable",
                        "Only a captured payment can be refunded",
                        null);
        };
    }
}
