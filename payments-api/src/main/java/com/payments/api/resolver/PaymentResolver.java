package com.payments.api.resolver;

import com.fasterxml.jackson.databind.JsonNode;
import com.payments.api.PaymentStatus;
import com.payments.api.client.PspAttentionException;
import com.payments.api.client.PspChargeLookup.Answer;
import com.payments.api.client.PspGateway;
import com.payments.api.client.PspUnavailableException;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.common.PspCallTimer;
import com.payments.api.config.ResolutionConfig;
import com.payments.api.payment.LimitedPsp;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository.Locked;
import com.payments.api.payment.PspAmountMismatch;
import com.payments.api.payment.PspChargeAttention;
import com.payments.api.resolver.ResolverRepository.Claimed;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Brings every UNKNOWN payment, and every PROCESSING payment whose process died before recording the outcome, to
 * the state the PSP has (docs/resolver.md; Kill Bill's janitor is the model). Per run: claim due payments with a
 * lease (one statement, {@code FOR UPDATE SKIP LOCKED}: safe with many replicas), ask the PSP by reference outside
 * any transaction, re-send the same charge with the same key when the PSP never received it, then in one
 * transaction re-read the payment under its row lock and record the answer through {@link PaymentOutcomeService}
 * (state machine, ledger, outbox, idempotency key) — or, still unknown, schedule the next attempt by the backoff and
 * escalate to the operations queue after the deadline. Each look-up and re-sent charge is written to
 * {@code psp_calls} in that transaction (also when the claim was lost meanwhile: the calls were made). Never FAILED unless the PSP said declined. A charge the PSP
 * reports with another amount or currency than ours records nothing and leaves the payment to an operator
 * ({@link PspAmountMismatch}, as for webhooks).
 *
 * <p>Manual payments (V98) whose PSP call is pending, AUTHORIZING, CAPTURING, CANCELING or EXPIRING, are claimed alike
 * and their call is sent again as it was, under the same PSP key (the payment id, {@code capture-<id>},
 * {@code void-<id>}): the PSP answers its first result or makes the call now, never a second capture. A refusal that
 * proves the PSP did nothing undoes the step (back to AUTHORIZED, or EXPIRED when the authorization lapsed). These
 * calls go to {@code psp_calls} too, and a capture's or void's deadline counts from its start, not from the payment's
 * creation ({@link ResolverRepository#reschedule}).
 */
@ApplicationScoped
public class PaymentResolver {
    static final String ACTOR = "resolver";

    private static final int PARALLEL_PER_RUN = 8;

    private final Pool pool;
    private final ResolverRepository repository;
    private final ClaimRecorder recorder;
    private final ResolverEscalations escalations;
    private final LimitedPsp psp;
    private final ResolverMetrics metrics;
    private final ResolutionConfig.Resolver config;

    public PaymentResolver(
            Pool pool,
            ResolverRepository repository,
            ClaimRecorder recorder,
            ResolverEscalations escalations,
            LimitedPsp psp,
            ResolverMetrics metrics,
            ResolutionConfig config) {
        this.pool = pool;
        this.repository = repository;
        this.recorder = recorder;
        this.escalations = escalations;
        this.psp = psp;
        this.metrics = metrics;
        this.config = config.resolver();
    }

    @Scheduled(
            identity = "payment-resolver",
            every = "${payments.resolver.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return runOnce()
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf("Resolver run failed: %s", e.getClass().getName());
                    return 0;
                })
                .flatMap(n -> refreshMetrics());
    }

    /** One run: claims and works the due payments; returns how many were claimed. */
    public Uni<Integer> runOnce() {
        return repository
                .claim(pool, config.batchSize(), config.lease())
                .flatMap(claims -> claims.isEmpty()
                        ? Uni.createFrom().item(0)
                        : Multi.createFrom()
                                .iterable(claims)
                                .onItem()
                                .transformToUni(this::resolveSafely)
                                .merge(PARALLEL_PER_RUN)
                                .collect()
                                .asList()
                                .map(List::size));
    }

    /** Re-reads the gauges of {@link ResolverMetrics}. */
    public Uni<Void> refreshMetrics() {
        return repository.snapshot(pool).invoke(metrics::update).replaceWithVoid();
    }

    private Uni<String> resolveSafely(Claimed claim) {
        return resolve(claim)
                .onFailure()
                .recoverWithItem(e -> {
                    // the lease expires and a later run tries again
                    Log.errorf(
                            "Resolver: payment %s attempt %d failed: %s",
                            claim.id(), claim.attempt(), e.getClass().getName());
                    return "error";
                })
                .invoke(metrics::resolution);
    }

    /**
     * The unit of work of one claim: ask the PSP, re-send if it never got the charge, record or reschedule; for a
     * manual payment re-send its pending call (authorize, capture, void) under the same PSP key. Returns the outcome
     * tag (captured, failed, authorized, canceled, expired, amount_mismatch, still_unknown, escalated, skipped). Public
     * for tests that play a second instance whose lease ran out.
     */
    public Uni<String> resolve(Claimed claim) {
        return switch (claim.status()) {
            case AUTHORIZING -> resendAuthorization(claim);
            case CAPTURING -> resendCapture(claim);
            case CANCELING, EXPIRING -> resendVoid(claim);
            default -> resolveCharge(claim);
        };
    }

    /** An automatic payment UNKNOWN or stuck PROCESSING: look the charge up, re-send it if the PSP never got it. */
    private Uni<String> resolveCharge(Claimed claim) {
        List<PspCall> calls = new ArrayList<>(2);
        PspCallTimer timer = new PspCallTimer();
        // the stored PSP id (Stripe: a pending PaymentIntent) lets the adapter retrieve by id after the PSP's key
        // window
        return psp.find(new ChargeQuery(chargeOf(claim), claim.pspReference(), claim.createdAt()), timer)
                .onItemOrFailure()
                .transformToUni((answer, failure) -> {
                    calls.add(timer.lookup(claim.attempt(), answer, failure));
                    if (failure != null) {
                        return stillUnknown(claim, "lookup", failure, calls);
                    }
                    if (answer instanceof Answer.Found found) {
                        return record(
                                claim,
                                found.succeeded()
                                        ? PaymentOutcome.captured(claim.id(), found.chargeId(), ACTOR)
                                        : PaymentOutcome.failed(
                                                claim.id(), found.chargeId(), found.declineCode(), ACTOR),
                                found.charge(),
                                calls);
                    }
                    return resend(claim, calls);
                });
    }

    /** The charge as the capture sent it: same payment id (the key), amount, currency and source. */
    private static ChargeRequest chargeOf(Claimed claim) {
        return new ChargeRequest(claim.id().toString(), claim.amount(), claim.currency(), claim.source());
    }

    /** The PSP never got the charge: send it again, same payment id as key and reference (the PSP deduplicates). */
    private Uni<String> resend(Claimed claim, List<PspCall> calls) {
        metrics.resend();
        Log.infof(
                "Resolver: payment %s attempt %d: not at the PSP, re-sending the charge", claim.id(), claim.attempt());
        PspCallTimer timer = new PspCallTimer();
        return sendAgain(
                claim,
                "charge",
                calls,
                psp.charge(claim.id(), claim.amount(), claim.currency(), claim.source(), timer),
                (result, failure) -> timer.charge(claim.attempt(), result, failure),
                result -> result.captured()
                        ? PaymentOutcome.captured(claim.id(), result.pspReference(), ACTOR)
                        : PaymentOutcome.failed(claim.id(), result.pspReference(), result.declineCode(), ACTOR));
    }

    /**
     * A manual payment's authorization whose answer was lost (or whose process died): the same authorization again,
     * with the payment id as key (the PSP answers its first result, or authorizes now if it never got it).
     */
    private Uni<String> resendAuthorization(Claimed claim) {
        metrics.resend();
        PspCallTimer timer = new PspCallTimer();
        return sendAgain(
                claim,
                "authorize",
                new ArrayList<>(1),
                psp.authorize(claim.id(), claim.amount(), claim.currency(), claim.source(), timer),
                (result, failure) -> timer.authorization(claim.attempt(), result, failure),
                result -> result.status() == ChargeResult.Status.AUTHORIZED
                        ? PaymentOutcome.authorized(claim.id(), result.pspChargeId(), ACTOR)
                        : PaymentOutcome.failed(claim.id(), result.pspChargeId(), result.declineCode(), ACTOR));
    }

    /**
     * Sends a call again ({@code call}, lazy) and records what its answer proves ({@code outcome}), with the call as
     * {@code psp_calls} records it added to {@code calls}; no answer: still unknown.
     */
    private <R> Uni<String> sendAgain(
            Claimed claim,
            String what,
            List<PspCall> calls,
            Uni<R> call,
            BiFunction<R, Throwable, PspCall> recorded,
            Function<R, PaymentOutcome> outcome) {
        return call.onItemOrFailure().transformToUni((result, failure) -> {
            calls.add(recorded.apply(result, failure));
            return failure != null
                    ? stillUnknown(claim, what, failure, calls)
                    : record(claim, outcome.apply(result), null, calls);
        });
    }

    /**
     * A capture whose answer was lost: the same capture (same amount) under the payment's one capture key, so the PSP
     * answers its first result or captures now; never a second capture. A refusal that proves nothing was captured
     * undoes it (AUTHORIZED, or EXPIRED when the authorization lapsed).
     */
    private Uni<String> resendCapture(Claimed claim) {
        metrics.resend();
        PspCallTimer timer = new PspCallTimer();
        return psp.capture(claim.id(), claim.pspReference(), claim.capturedAmount(), claim.currency(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    List<PspCall> calls =
                            List.of(timer.capture(claim.attempt(), claim.capturedAmount(), result, failure));
                    if (failure != null) {
                        return stillUnknown(claim, "capture", failure, calls);
                    }
                    if (result.status() == ChargeResult.Status.CAPTURED) {
                        return record(claim, PaymentOutcome.captured(claim.id(), null, ACTOR), null, calls);
                    }
                    String code = result.declineCode();
                    if (ChargeResult.AUTHORIZATION_EXPIRED.equals(code)
                            || ChargeResult.AUTHORIZATION_CANCELED.equals(code)) {
                        return undo(claim, PaymentStatus.EXPIRED, code, calls);
                    }
                    if (ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED.equals(code)
                            || ChargeResult.NOT_AUTHORIZED.equals(code)) {
                        return undo(claim, PaymentStatus.AUTHORIZED, code, calls);
                    }
                    return stillUnknown(claim, "capture", new PspUnavailableException("declined " + code), calls);
                });
    }

    /**
     * A void whose answer was lost (or whose process died): the same void under the payment's one void key. Voided (or
     * lapsed at the PSP): CANCELED for a merchant's cancel, EXPIRED for the expiry's void. A cancel the PSP refused
     * because nothing was authorized moves back to AUTHORIZED; any other refusal stays unknown, for an operator after
     * the deadline (the expiry's never goes back to AUTHORIZED: the expiry would claim it again at once and send the
     * same refused void).
     */
    private Uni<String> resendVoid(Claimed claim) {
        metrics.resend();
        boolean expiry = claim.status() == PaymentStatus.EXPIRING;
        PspCallTimer timer = new PspCallTimer();
        return psp.voidAuthorization(claim.id(), claim.pspReference(), timer)
                .onItemOrFailure()
                .transformToUni((result, failure) -> {
                    List<PspCall> calls = List.of(timer.voidCall(claim.attempt(), result, failure));
                    if (failure != null) {
                        return stillUnknown(claim, "void", failure, calls);
                    }
                    if (result.status() == ChargeResult.Status.CANCELED) {
                        PaymentOutcome voided = expiry
                                ? PaymentOutcome.expired(claim.id(), ACTOR)
                                : PaymentOutcome.canceled(claim.id(), ACTOR);
                        return record(claim, voided, null, calls);
                    }
                    if (!expiry && ChargeResult.NOT_AUTHORIZED.equals(result.declineCode())) {
                        return undo(claim, PaymentStatus.AUTHORIZED, result.declineCode(), calls);
                    }
                    return stillUnknown(
                            claim, "void", new PspUnavailableException("declined " + result.declineCode()), calls);
                });
    }

    /** The PSP refused the pending capture or void and did nothing: the payment moves back (or EXPIRED). */
    private Uni<String> undo(Claimed claim, PaymentStatus to, String code, List<PspCall> calls) {
        return recorder.underLock(claim, calls, (conn, current) -> recorder.undo(conn, claim, to, code)
                .map(undone -> {
                    Log.infof(
                            "Resolver: payment %s %s -> %s, the PSP refused: %s (attempt %d)",
                            claim.id(), current.status(), to, code, claim.attempt());
                    return to.name().toLowerCase(Locale.ROOT);
                }));
    }

    /**
     * A definite PSP answer: recorded under the row lock if this claim still owns the payment and {@code reported},
     * the charge as the lookup found it (null for the answer to our own charge, made with our amount under our key),
     * has our amount and currency.
     */
    private Uni<String> record(Claimed claim, PaymentOutcome outcome, JsonNode reported, List<PspCall> calls) {
        return recorder.underLock(claim, calls, (conn, current) -> {
            if (reported != null && !PspAmountMismatch.sameMoney(current, reported)) {
                return amountMismatch(conn, claim, current, reported);
            }
            return recorder.record(conn, outcome).map(recorded -> {
                PaymentStatus now = recorded.payment().status();
                Log.infof(
                        "Resolver: payment %s %s -> %s (attempt %d)",
                        claim.id(), current.status(), now, claim.attempt());
                return now == PaymentStatus.FAILED ? "failed" : now.name().toLowerCase(Locale.ROOT);
            });
        });
    }

    /**
     * The PSP reports the charge with another amount or currency: nothing recorded. The payment becomes (or stays)
     * UNKNOWN, is never claimed again (so never re-sent) and waits for an operator with a psp_amount_mismatch item.
     */
    private Uni<String> amountMismatch(SqlClient conn, Claimed claim, Locked current, JsonNode reported) {
        Log.warnf(
                "Resolver: payment %s attempt %d: the PSP reports the charge with another amount or currency than"
                        + " %d %s; nothing recorded, operations item %s",
                claim.id(), claim.attempt(), current.amount(), current.currency(), PspAmountMismatch.REASON);
        String error = PspAmountMismatch.REASON + ": the PSP's charge differs from the payment";
        return toUnknown(conn, claim, current, error)
                .flatMap(v -> repository.stop(conn, claim.id(), claim.attempt(), error))
                .flatMap(v -> escalations.amountMismatch(conn, claim, current, reported))
                .replaceWith("amount_mismatch");
    }

    /** A stuck PROCESSING payment moves to UNKNOWN (its key is completed with the 202); an UNKNOWN one stays. */
    private Uni<Void> toUnknown(SqlClient conn, Claimed claim, Locked current, String error) {
        if (current.status() != PaymentStatus.PROCESSING) {
            return Uni.createFrom().voidItem();
        }
        return recorder.record(conn, PaymentOutcome.unknown(claim.id(), error, ACTOR))
                .invoke(r -> Log.infof(
                        "Resolver: payment %s PROCESSING -> UNKNOWN (attempt %d)", claim.id(), claim.attempt()))
                .replaceWithVoid();
    }

    /**
     * No definite answer: UNKNOWN (a stuck PROCESSING payment moves there), next attempt or escalation. The PSP's id of
     * a pending charge is kept; an answer only an operator can settle opens {@link PspChargeAttention}'s item.
     */
    private Uni<String> stillUnknown(Claimed claim, String call, Throwable failure, List<PspCall> calls) {
        Duration delay = backoff(claim.attempt());
        String error = failure instanceof PspAttentionException attention
                ? call + ": PspAttentionException " + attention.detail()
                : call + ": " + failure.getClass().getSimpleName();
        return recorder.underLock(claim, calls, (conn, current) -> toUnknown(conn, claim, current, error)
                .call(v -> failure instanceof PspAttentionException attention
                        ? escalations.attention(conn, claim, attention)
                        : Uni.createFrom().voidItem())
                .flatMap(v -> repository.reschedule(
                        conn,
                        claim.id(),
                        claim.attempt(),
                        delay,
                        config.deadline(),
                        error,
                        PspGateway.pspChargeIdOf(failure)))
                .flatMap(escalated -> {
                    if (!Boolean.TRUE.equals(escalated)) {
                        Log.infof(
                                "Resolver: payment %s UNKNOWN after attempt %d (%s), next attempt in %s",
                                claim.id(), claim.attempt(), error, delay);
                        return Uni.createFrom().item("still_unknown");
                    }
                    Log.warnf(
                            "Resolver: payment %s UNKNOWN after attempt %d (%s): deadline passed, operations item opened",
                            claim.id(), claim.attempt(), error);
                    return escalations.deadlinePassed(conn, claim, error).replaceWith("escalated");
                }));
    }

    Duration backoff(int attempt) {
        List<Duration> steps = config.backoff();
        return steps.get(Math.min(Math.max(attempt, 1), steps.size()) - 1);
    }
}
