package com.payments.api.expiry;

import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.client.PspGateway;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.common.PspCallTimer;
import com.payments.api.config.ApiConfig;
import com.payments.api.payment.LimitedPsp;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Started;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.port.ChargeResult;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * Voids the authorizations not captured within {@code payments.authorizations.expire-after} (docs/api.md "Manual
 * capture", issue 42). Per run: one statement claims due AUTHORIZED payments and moves them to EXPIRING, guarded as a
 * capture's or a cancel's start (of racing ones exactly one wins; {@code FOR UPDATE SKIP LOCKED}: safe with many
 * instances); each is voided at the PSP under the payment's one void key ({@code void-<id>}, as a cancel's: one void
 * per authorization) outside any transaction; then the outcome is recorded as a cancel's
 * ({@link PaymentOutcomeService}): EXPIRED with PaymentExpired (also when the PSP had voided or expired it already).
 * Certainly not voided (never sent): AUTHORIZED again, for the next run. Answer lost: it stays EXPIRING for the
 * resolver, which re-sends the same void. Refused (the PSP's charge is no longer an authorization): it stays EXPIRING
 * with the refusal for the resolver and then an operator, rather than back to AUTHORIZED, where every run would claim
 * it again first and send the same refused void.
 */
@ApplicationScoped
public class AuthorizationExpiry {
    static final String ACTOR = "expiry";

    private static final int PARALLEL_PER_RUN = 8;

    private final Pool pool;
    private final ExpiryRepository repository;
    private final PaymentRepository payments;
    private final PaymentOutcomeService outcomes;
    private final LimitedPsp psp;
    private final ApiMetrics metrics;
    private final ApiConfig config;
    private final TraceHeaders traceHeaders;

    public AuthorizationExpiry(
            Pool pool,
            ExpiryRepository repository,
            PaymentRepository payments,
            PaymentOutcomeService outcomes,
            LimitedPsp psp,
            ApiMetrics metrics,
            ApiConfig config,
            TraceHeaders traceHeaders) {
        this.pool = pool;
        this.repository = repository;
        this.payments = payments;
        this.outcomes = outcomes;
        this.psp = psp;
        this.metrics = metrics;
        this.config = config;
        this.traceHeaders = traceHeaders;
    }

    @Scheduled(
            identity = "authorization-expiry",
            every = "${payments.authorizations.expire-every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return runOnce()
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf("Expiry run failed: %s", e.getClass().getName());
                    return List.of();
                })
                .replaceWithVoid();
    }

    /** One run: claims the due authorizations and voids them; the outcome tag of each (see {@link ApiMetrics#expiry}). */
    public Uni<List<String>> runOnce() {
        ApiConfig.Authorizations settings = config.authorizations();
        return repository
                .claim(
                        pool,
                        settings.expireAfter(),
                        settings.expireBatchSize(),
                        config.psp().stuckAfter(),
                        ACTOR)
                .flatMap(claimed -> claimed.isEmpty()
                        ? Uni.createFrom().item(List.<String>of())
                        : Multi.createFrom()
                                .iterable(claimed)
                                .onItem()
                                .transformToUni(this::expireSafely)
                                .merge(PARALLEL_PER_RUN)
                                .collect()
                                .asList());
    }

    private Uni<String> expireSafely(Started started) {
        return expire(started)
                .onFailure()
                .recoverWithItem(e -> {
                    // the payment stays EXPIRING: the resolver takes it after stuck-after
                    Log.errorf(
                            "Expiry: payment %s failed: %s",
                            started.payment().id(), e.getClass().getName());
                    return "error";
                })
                .invoke(metrics::expiry);
    }

    private Uni<String> expire(Started started) {
        Payment p = started.payment();
        PspCallTimer timer = new PspCallTimer();
        return psp.voidAuthorization(p.id(), p.pspReference(), timer)
                .onItemOrFailure()
                .transformToUni(
                        (result, failure) -> settle(started, result, failure, timer.voidCall(0, result, failure)));
    }

    /** What the void's answer proves: EXPIRED, still EXPIRING for the resolver, or (certainly not sent) AUTHORIZED. */
    private Uni<String> settle(Started started, ChargeResult result, Throwable failure, PspCall call) {
        Payment p = started.payment();
        if (failure != null) {
            String cause = failure.getClass().getSimpleName();
            return PspGateway.neverSent(failure)
                    ? notSent(started, cause, call)
                    : pending(p, "unknown: " + cause, "unknown", call);
        }
        if (result.status() == ChargeResult.Status.CANCELED) {
            // voided now, or the PSP had let it lapse (detail expired): released either way
            return record(p, PaymentOutcome.expired(p.id(), ACTOR), call).replaceWith("expired");
        }
        return pending(p, "declined " + result.declineCode(), "refused", call);
    }

    private Uni<Boolean> record(Payment p, PaymentOutcome outcome, PspCall call) {
        return pool.withTransaction(conn -> outcomes.record(conn, p, outcome, call, traceHeaders.current()))
                .map(recorded -> {
                    Log.infof(
                            "Expiry: payment %s %s -> %s",
                            p.id(), p.status(), recorded.payment().status());
                    return recorded.changed();
                });
    }

    /** No definite answer: EXPIRING stays, with the error, and the resolver re-sends the same void now. */
    private Uni<String> pending(Payment p, String error, String tag, PspCall call) {
        Log.warnf("Expiry: the void of payment %s has no definite outcome (%s): left to the resolver", p.id(), error);
        return record(p, PaymentOutcome.pending(p.id(), PaymentStatus.EXPIRING, error, ACTOR), call)
                .replaceWith(tag);
    }

    /**
     * The PSP was certainly not called: AUTHORIZED again, unless a resolver claimed the payment meanwhile (it may have
     * sent the void since: its outcome is the resolver's to record).
     */
    private Uni<String> notSent(Started started, String cause, PspCall call) {
        Payment p = started.payment();
        return payments.undoMove(
                        pool,
                        p.id(),
                        PaymentStatus.EXPIRING,
                        PaymentStatus.AUTHORIZED,
                        started.attempts(),
                        "not sent: " + cause,
                        null,
                        ACTOR,
                        call)
                .flatMap(undone -> {
                    if (!undone) {
                        Log.warnf("Expiry: PSP not called for payment %s (%s), but the resolver has it", p.id(), cause);
                        return Uni.createFrom().item("unknown");
                    }
                    Log.warnf("Expiry: PSP not called for payment %s (%s): AUTHORIZED again", p.id(), cause);
                    return Uni.createFrom().item("not_sent");
                });
    }
}
