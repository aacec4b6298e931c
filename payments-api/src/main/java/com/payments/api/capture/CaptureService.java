package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.client.PspAttentionException;
import com.payments.api.client.PspChargeResult;
import com.payments.api.client.PspGateway;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.common.PspCallTimer;
import com.payments.api.common.Refusal;
import com.payments.api.common.RequestHash;
import com.payments.api.common.RunToTheEnd;
import com.payments.api.config.ApiConfig;
import com.payments.api.payment.AmountLimits;
import com.payments.api.payment.LimitedPsp;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentOutcomeService.PreparedOutcome;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.NewPayment;
import com.payments.api.payment.PaymentRepository.OutcomeRow;
import com.payments.api.payment.PspChargeAttention;
import com.payments.contracts.sql.DatabaseBusyException;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.port.ChargeResult;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /v1/payments} (docs/architecture.md §3): (1) claim the key and insert the PROCESSING payment in one statement,
 * (2) charge at the PSP with the payment id as its key, (3) record the outcome in one statement. A charge that was
 * never sent releases the key and drops the payment (refused {@code psp_unavailable}), unless a resolver claimed the
 * payment meanwhile; one whose answer was lost leaves the payment UNKNOWN for the resolver. Concurrent captures share statements (1) and (3)
 * ({@link StatementBatcher}).
 *
 * <p>An amount the PSP cannot take in the currency ({@link AmountLimits#requireTakenByPsp}, e.g. Stripe's units) is refused
 * before (1): 422, nothing stored.
 *
 * <p>Load is shed ({@code service_overloaded}, nothing stored) only at saturation: when statement (1) does not start within
 * {@code payments.capture.database-wait-budget}, or when no PSP permit of the instance's {@link PspConcurrencyLimit}
 * frees up within {@code payments.psp.limit.max-wait} (then the claimed payment is dropped and the key released, as
 * for any charge never sent).
 */
@ApplicationScoped
public class CaptureService {
    static final String PATH = "/v1/payments";
    static final String ACTOR = "capture";

    private final Pool pool;
    private final PaymentRepository payments;
    private final PaymentOutcomeService outcomes;
    private final LimitedPsp psp;
    private final CaptureReplays replays;
    private final PspChargeAttention attentionItems;
    private final ApiMetrics metrics;
    private final ApiConfig config;
    private final StatementBatcher<NewPayment, Payment> claims;
    private final StatementBatcher<OutcomeRow, Boolean> recordedOutcomes;

    public CaptureService(
            Pool pool,
            PaymentRepository payments,
            PaymentOutcomeService outcomes,
            LimitedPsp psp,
            CaptureReplays replays,
            PspChargeAttention attentionItems,
            ApiMetrics metrics,
            ApiConfig config) {
        this.pool = pool;
        this.payments = payments;
        this.outcomes = outcomes;
        this.psp = psp;
        this.replays = replays;
        this.attentionItems = attentionItems;
        this.metrics = metrics;
        this.config = config;
        ApiConfig.Capture batching = config.capture();
        this.claims = new StatementBatcher<>(
                batch -> payments.insertProcessingClaimingKeys(pool, batch),
                batching.maxBatchSize(),
                batching.statementsInFlight(),
                metrics.captureBatchSizes("claim"),
                batching.databaseWaitBudget(),
                null);
        this.recordedOutcomes = new StatementBatcher<>(
                batch -> payments.recordOutcomes(pool, ACTOR, batch),
                batching.maxBatchSize(),
                batching.statementsInFlight(),
                metrics.captureBatchSizes("outcome"));
    }

    public Uni<CaptureOutcome> capture(
            Merchant merchant, String key, CaptureRequest request, Map<String, String> traceHeaders) {
        AmountLimits.requireTakenByPsp(psp.refusal(request.amount(), request.currency()));
        byte[] hash = RequestHash.of("POST", PATH, request.canonicalJson());
        return RunToTheEnd.of(claims.submit(new NewPayment(
                        UUID.randomUUID(),
                        merchant.id(),
                        request.orderId(),
                        request.amount(),
                        request.currency(),
                        request.source(),
                        request.metadata(),
                        key,
                        hash,
                        request.manual() ? Payment.MANUAL : Payment.AUTOMATIC))
                .onFailure(DatabaseBusyException.class)
                .transform(busy -> {
                    metrics.shed("database");
                    return Refusal.overloaded(config.psp().unavailableRetryAfterSeconds());
                })
                .flatMap(payment -> payment == null
                        ? replays.existing(merchant, key, hash)
                        : payment.manual()
                                ? authorize(merchant, key, payment, request, traceHeaders)
                                : charge(merchant, key, payment, request, traceHeaders)));
    }

    private Uni<CaptureOutcome> charge(
            Merchant merchant, String key, Payment payment, CaptureRequest request, Map<String, String> traceHeaders) {
        PspCallTimer timer = new PspCallTimer();
        return psp.charge(payment.id(), request.amount(), request.currency(), request.source(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    PspCall call = timer.charge(0, result, failure);
                    if (failure != null && PspGateway.neverSent(failure)) {
                        return release(merchant, key, payment, failure, call, traceHeaders);
                    }
                    Uni<CaptureOutcome> recorded =
                            record(key, payment, outcomeOf(payment.id(), result, failure), call, traceHeaders);
                    return failure instanceof PspAttentionException attention
                            ? recorded.call(outcome -> openAttentionItem(payment, attention))
                            : recorded;
                });
    }

    /**
     * A manual payment (docs/api.md "Manual capture"): the PSP authorizes, holding the money; recorded AUTHORIZED or
     * FAILED, or left AUTHORIZING for the resolver when the answer was lost. Never sent: dropped, key released, as a
     * charge.
     */
    private Uni<CaptureOutcome> authorize(
            Merchant merchant, String key, Payment payment, CaptureRequest request, Map<String, String> traceHeaders) {
        PspCallTimer timer = new PspCallTimer();
        return psp.authorize(payment.id(), request.amount(), request.currency(), request.source(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    PspCall call = timer.authorization(0, result, failure);
                    if (failure != null && PspGateway.neverSent(failure)) {
                        return release(merchant, key, payment, failure, call, traceHeaders);
                    }
                    if (failure != null) {
                        Log.warnf(
                                "PSP outcome unknown for the authorization of payment %s: %s",
                                payment.id(), failure.getClass().getSimpleName());
                        return record(
                                key,
                                payment,
                                unknown(payment, failure.getClass().getSimpleName()),
                                call,
                                traceHeaders);
                    }
                    return record(
                            key,
                            payment,
                            result.status() == ChargeResult.Status.AUTHORIZED
                                    ? PaymentOutcome.authorized(payment.id(), result.pspChargeId(), ACTOR)
                                    : PaymentOutcome.failed(
                                            payment.id(), result.pspChargeId(), result.declineCode(), ACTOR),
                            call,
                            traceHeaders);
                });
    }

    /** Outcome unknown: UNKNOWN for a charge; a manual payment stays AUTHORIZING (V98: never UNKNOWN). */
    private static PaymentOutcome unknown(Payment payment, String error) {
        return payment.manual()
                ? PaymentOutcome.pending(payment.id(), PaymentStatus.AUTHORIZING, "unknown: " + error, ACTOR)
                : PaymentOutcome.unknown(payment.id(), error, ACTOR);
    }

    /**
     * The PSP refused the request in a way only an operator can settle: the payment is recorded UNKNOWN and gets an
     * operations item. Should this statement fail, the resolver opens the item at its next attempt (it gets the same
     * answer), so the merchant's answer does not wait on it.
     */
    private Uni<Boolean> openAttentionItem(Payment payment, PspAttentionException attention) {
        Log.warnf("PSP needs an operator for payment %s: %s", payment.id(), attention.detail());
        return attentionItems
                .open(pool, payment.id(), attention, ACTOR)
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf(
                            "Operations item %s for payment %s not opened (the resolver will): %s",
                            PspChargeAttention.REASON,
                            payment.id(),
                            e.getClass().getName());
                    return false;
                });
    }

    /**
     * Step 3: records the outcome and the PSP call (shared statement) and answers with the payment as it is then, or
     * with the key's stored answer if another writer recorded the outcome first ({@link CaptureReplays#afterOutcome}).
     */
    private Uni<CaptureOutcome> record(
            String key, Payment payment, PaymentOutcome outcome, PspCall call, Map<String, String> traceHeaders) {
        PreparedOutcome prepared = outcomes.prepare(payment, outcome, traceHeaders);
        return recordedOutcomes
                .submit(prepared.row().withPspCall(call))
                .flatMap(moved -> outcomes.settle(pool, prepared, moved))
                .flatMap(recorded -> {
                    metrics.capture(outcomeTag(recorded.payment().status()));
                    return replays.afterOutcome(payment.merchantId(), key, recorded);
                });
    }

    private static PaymentOutcome outcomeOf(UUID paymentId, PspChargeResult result, Throwable failure) {
        if (failure != null) {
            // a timeout or a connection lost after sending: the PSP may have charged. Never FAILED here.
            Log.warnf(
                    "PSP outcome unknown for payment %s: %s",
                    paymentId, failure.getClass().getSimpleName());
            String error = failure instanceof PspAttentionException attention
                    ? "PspAttentionException " + attention.detail()
                    : failure.getClass().getSimpleName();
            // a pending charge's PSP id (Stripe's pi_…) is kept, so that the resolver can retrieve it by id
            return PaymentOutcome.unknown(paymentId, PspGateway.pspChargeIdOf(failure), error, ACTOR);
        }
        return result.captured()
                ? PaymentOutcome.captured(paymentId, result.pspReference(), ACTOR)
                : PaymentOutcome.failed(paymentId, result.pspReference(), result.declineCode(), ACTOR);
    }

    /**
     * The PSP never got the charge: drop the payment and give the key back (refused), so the client can retry with it.
     * Unless a resolver claimed the payment meanwhile (this answer came after the stuck-after time): the resolver
     * may have sent the charge, so the outcome is unknown, recorded and answered as a lost answer is (UNKNOWN).
     */
    private Uni<CaptureOutcome> release(
            Merchant merchant,
            String key,
            Payment payment,
            Throwable failure,
            PspCall call,
            Map<String, String> traceHeaders) {
        return payments.dropNeverSent(pool, merchant.id(), payment.id(), key)
                .flatMap(dropped -> replays.neverSent(
                        dropped,
                        payment.manual() ? "authorization" : "charge",
                        payment.id(),
                        failure,
                        () -> record(
                                key,
                                payment,
                                unknown(payment, failure.getClass().getSimpleName()),
                                call,
                                traceHeaders)));
    }

    private static String outcomeTag(PaymentStatus status) {
        return switch (status) {
            case CAPTURED -> "captured";
            case AUTHORIZED -> "authorized";
            case FAILED -> "declined";
            default -> "unknown";
        };
    }
}
