package com.payments.api.capture;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.Merchant;
import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.client.PspGateway;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.common.PspCallTimer;
import com.payments.api.common.Refusal;
import com.payments.api.common.RequestHash;
import com.payments.api.common.RunToTheEnd;
import com.payments.api.payment.LimitedPsp;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Started;
import com.payments.psp.port.ChargeResult;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * {@code POST /v1/payments/{id}/capture} and {@code /cancel} of a manual payment's authorization (docs/api.md "Manual
 * capture"; the state machine of V98): (1) one transaction claims the request's Idempotency-Key and moves the payment
 * from AUTHORIZED to CAPTURING (with the captured amount) or CANCELING, guarded, so that of racing captures and cancels
 * exactly one wins; (2) only the winner calls the PSP, under the payment's one capture or void key; (3) the outcome is
 * recorded as a charge's is ({@link PaymentOutcomeService}: CAPTURED with its ledger transaction of the captured amount,
 * CANCELED, the event, the key completed). A call the PSP certainly did not make (never sent, or refused) is undone
 * (back to AUTHORIZED, or EXPIRED when the authorization lapsed) and answered with a problem, the key released; one whose
 * answer was lost stays CAPTURING/CANCELING for the resolver (202), never re-sent with another key.
 */
@ApplicationScoped
public class ManualCaptureService {
    static final String CAPTURE_ACTOR = "capture";
    static final String CANCEL_ACTOR = "cancel";

    /** Refusals of a capture after which the PSP's authorization can no longer be captured. */
    private static final Set<String> AUTHORIZATION_GONE =
            Set.of(ChargeResult.AUTHORIZATION_EXPIRED, ChargeResult.AUTHORIZATION_CANCELED);

    /** Refusals that prove the PSP made no capture or void and the authorization stands. */
    private static final Set<String> NOTHING_DONE =
            Set.of(ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED, ChargeResult.NOT_AUTHORIZED);

    private final Pool pool;
    private final PaymentRepository payments;
    private final PaymentOutcomeService outcomes;
    private final LimitedPsp psp;
    private final CaptureReplays replays;
    private final ApiMetrics metrics;

    public ManualCaptureService(
            Pool pool,
            PaymentRepository payments,
            PaymentOutcomeService outcomes,
            LimitedPsp psp,
            CaptureReplays replays,
            ApiMetrics metrics) {
        this.pool = pool;
        this.payments = payments;
        this.outcomes = outcomes;
        this.psp = psp;
        this.replays = replays;
        this.metrics = metrics;
    }

    /**
     * Captures {@code amount} (null: the whole authorization) of the merchant's authorized payment. More than was
     * authorized is refused before anything is written.
     */
    public Uni<CaptureOutcome> capture(
            Merchant merchant, String key, UUID id, Long amount, Map<String, String> traceHeaders) {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        if (amount != null) {
            body.put("amount", amount);
        }
        byte[] hash = RequestHash.of("POST", "/v1/payments/" + id + "/capture", body);
        return payments.find(pool, merchant.id(), id).flatMap(payment -> {
            if (payment == null) {
                return Uni.createFrom().failure(Refusal.notFound());
            }
            long captured = amount != null ? amount : payment.amount();
            if (captured > payment.amount()) {
                return Uni.createFrom()
                        .failure(new Refusal(
                                Refusal.Kind.UNPROCESSABLE,
                                ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED,
                                "Amount exceeds authorized amount",
                                "A capture may take at most the authorized amount of the payment",
                                null));
            }
            return RunToTheEnd.of(payments.startMove(
                            pool,
                            merchant.id(),
                            id,
                            key,
                            hash,
                            PaymentStatus.CAPTURING,
                            captured,
                            CAPTURE_ACTOR,
                            ManualCaptureService::notAuthorized)
                    .flatMap(started -> started == null
                            ? replays.existing(merchant, key, hash)
                            : captureAtPsp(started, traceHeaders)));
        });
    }

    /** Voids the merchant's authorized payment. */
    public Uni<CaptureOutcome> cancel(Merchant merchant, String key, UUID id, Map<String, String> traceHeaders) {
        byte[] hash = RequestHash.of("POST", "/v1/payments/" + id + "/cancel", JsonNodeFactory.instance.objectNode());
        return payments.find(pool, merchant.id(), id)
                .flatMap(payment -> payment == null
                        ? Uni.createFrom().<CaptureOutcome>failure(Refusal.notFound())
                        : RunToTheEnd.of(payments.startMove(
                                        pool,
                                        merchant.id(),
                                        id,
                                        key,
                                        hash,
                                        PaymentStatus.CANCELING,
                                        null,
                                        CANCEL_ACTOR,
                                        ManualCaptureService::notAuthorized)
                                .flatMap(started -> started == null
                                        ? replays.existing(merchant, key, hash)
                                        : voidAtPsp(started, traceHeaders))));
    }

    private Uni<CaptureOutcome> captureAtPsp(Started started, Map<String, String> traceHeaders) {
        Payment p = started.payment();
        PspCallTimer timer = new PspCallTimer();
        return psp.capture(p.id(), p.pspReference(), p.capturedAmount(), p.currency(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    PspCall call = timer.capture(0, p.capturedAmount(), result, failure);
                    if (failure != null) {
                        return notDefinite(started, CAPTURE_ACTOR, failure, call, traceHeaders);
                    }
                    if (result.status() == ChargeResult.Status.CAPTURED) {
                        return record(
                                started, PaymentOutcome.captured(p.id(), null, CAPTURE_ACTOR), call, traceHeaders);
                    }
                    String code = result.declineCode();
                    if (AUTHORIZATION_GONE.contains(code)) {
                        return refused(started, PaymentStatus.EXPIRED, code, CAPTURE_ACTOR, call, traceHeaders);
                    }
                    if (NOTHING_DONE.contains(code)) {
                        return refused(started, PaymentStatus.AUTHORIZED, code, CAPTURE_ACTOR, call, traceHeaders);
                    }
                    // e.g. already_captured: the PSP's authorization is not as our row says; the resolver and then an
                    // operator settle it
                    return stillPending(started, CAPTURE_ACTOR, "declined " + code, call, traceHeaders);
                });
    }

    private Uni<CaptureOutcome> voidAtPsp(Started started, Map<String, String> traceHeaders) {
        Payment p = started.payment();
        PspCallTimer timer = new PspCallTimer();
        return psp.voidAuthorization(p.id(), p.pspReference(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    PspCall call = timer.voidCall(0, result, failure);
                    if (failure != null) {
                        return notDefinite(started, CANCEL_ACTOR, failure, call, traceHeaders);
                    }
                    if (result.status() == ChargeResult.Status.CANCELED) {
                        return record(started, PaymentOutcome.canceled(p.id(), CANCEL_ACTOR), call, traceHeaders);
                    }
                    String code = result.declineCode();
                    if (ChargeResult.NOT_AUTHORIZED.equals(code)) {
                        return refused(started, PaymentStatus.AUTHORIZED, code, CANCEL_ACTOR, call, traceHeaders);
                    }
                    // already_captured: a void refused because the PSP captured it; the row cannot say so: an operator
                    return stillPending(started, CANCEL_ACTOR, "declined " + code, call, traceHeaders);
                });
    }

    /**
     * Records an outcome and its PSP call as a charge's are, and answers with the payment it leaves, or with the key's
     * stored answer if another writer recorded the outcome first ({@link CaptureReplays#afterOutcome}).
     */
    private Uni<CaptureOutcome> record(
            Started started, PaymentOutcome outcome, PspCall call, Map<String, String> traceHeaders) {
        Payment before = started.payment();
        return pool.withTransaction(conn -> outcomes.record(conn, before, outcome, call, traceHeaders))
                .flatMap(recorded -> {
                    metrics.capture(
                            "manual_" + recorded.payment().status().name().toLowerCase(Locale.ROOT));
                    return replays.afterOutcome(before.merchantId(), started.key(), recorded);
                });
    }

    /** No definite answer: never sent (undone, 503) or lost (the pending state stays for the resolver, 202). */
    private Uni<CaptureOutcome> notDefinite(
            Started started, String actor, Throwable failure, PspCall call, Map<String, String> traceHeaders) {
        Payment p = started.payment();
        String cause = failure.getClass().getSimpleName();
        if (!PspGateway.neverSent(failure)) {
            Log.warnf("PSP outcome unknown for the %s of payment %s: %s", actor, p.id(), cause);
            return stillPending(started, actor, "unknown: " + cause, call, traceHeaders);
        }
        return payments.undoMove(
                        pool,
                        p.id(),
                        p.status(),
                        PaymentStatus.AUTHORIZED,
                        started.attempts(),
                        "not sent: " + cause,
                        null,
                        actor,
                        call)
                .flatMap(undone -> replays.neverSent(
                        undone,
                        actor,
                        p.id(),
                        failure,
                        // the undo statement wrote the call already
                        () -> stillPending(started, actor, "unknown: " + cause, null, traceHeaders)));
    }

    /** The PSP's call stays pending ({@code p.status()}): recorded with the error, answered 202. */
    private Uni<CaptureOutcome> stillPending(
            Started started, String actor, String error, PspCall call, Map<String, String> traceHeaders) {
        Payment p = started.payment();
        return record(started, PaymentOutcome.pending(p.id(), p.status(), error, actor), call, traceHeaders);
    }

    /** The PSP refused and did nothing: undone to {@code to}, refused with the PSP's code (409), key released. */
    private Uni<CaptureOutcome> refused(
            Started started,
            PaymentStatus to,
            String code,
            String actor,
            PspCall call,
            Map<String, String> traceHeaders) {
        Payment p = started.payment();
        var event = to == PaymentStatus.EXPIRED ? outcomes.eventOf(p.moved(to, null), traceHeaders) : null;
        return payments.undoMove(pool, p.id(), p.status(), to, null, "declined " + code, event, actor, call)
                .flatMap(undone -> {
                    Log.infof("PSP refused the %s of payment %s (%s): %s -> %s", actor, p.id(), code, p.status(), to);
                    metrics.capture("manual_refused");
                    return Uni.createFrom()
                            .failure(new Refusal(
                                    Refusal.Kind.CONFLICT,
                                    code,
                                    "Refused by the payment provider",
                                    to == PaymentStatus.EXPIRED
                                            ? "The authorization can no longer be captured; nothing was captured"
                                            : "The payment provider refused; nothing was changed",
                                    null));
                });
    }

    private static Refusal notAuthorized() {
        return new Refusal(
                Refusal.Kind.CONFLICT,
                "payment_not_authorized",
                "Payment not authorized",
                "Only an authorized payment (captureMethod manual, status AUTHORIZED) can be captured or canceled",
                null);
    }
}
