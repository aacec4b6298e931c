package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.client.PspGateway;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.Refusal;
import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.IdempotencyService.Claim;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.payment.PaymentOutcomeService.Recorded;
import com.payments.api.payment.PaymentRepository;
import com.payments.psp.PspSaturatedException;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * A capture, authorization, manual capture or cancel answered by its Idempotency-Key rather than by a PSP outcome. A
 * key claimed before: a completed key answers its stored answer byte for byte (or the payment as it is now, if the
 * answer was stored before an outcome); a key in flight or reused with another request is refused
 * ({@link IdempotencyService#refusalFor}). The answer of a request whose outcome another writer recorded first
 * ({@link #afterOutcome}). A key released because the PSP was never called: refused {@code psp_unavailable}
 * ({@link #neverSent}).
 */
@ApplicationScoped
public class CaptureReplays {
    private final Pool pool;
    private final IdempotencyService idempotency;
    private final PaymentRepository payments;
    private final StoredAnswers answers;
    private final ApiMetrics metrics;
    private final ApiConfig config;

    public CaptureReplays(
            Pool pool,
            IdempotencyService idempotency,
            PaymentRepository payments,
            StoredAnswers answers,
            ApiMetrics metrics,
            ApiConfig config) {
        this.pool = pool;
        this.idempotency = idempotency;
        this.payments = payments;
        this.answers = answers;
        this.metrics = metrics;
        this.config = config;
    }

    Uni<CaptureOutcome> existing(Merchant merchant, String key, byte[] hash) {
        return idempotency.existing(pool, merchant.id(), key, hash).flatMap(claim -> {
            if (claim instanceof Claim.Completed completed) {
                return replay(merchant, completed);
            }
            return Uni.createFrom()
                    .failure(IdempotencyService.refusalFor(
                            claim, config.idempotency().inFlightRetryAfterSeconds()));
        });
    }

    /**
     * The answer to the request that made the PSP call, once its outcome is recorded: the payment as the outcome left
     * it; or, when another writer recorded an outcome first (the webhook, the resolver, another instance, or the
     * previous release during a roll, which renders its own format) and completed the key, the key's stored answer,
     * byte for byte, so that the first answer and every replay are the same bytes. A key stored before the outcome
     * (202) answers the payment's current state, as its replays do.
     */
    Uni<CaptureOutcome> afterOutcome(UUID merchantId, String key, Recorded recorded) {
        if (recorded.changed()) {
            return Uni.createFrom().item(new CaptureOutcome.Charged(recorded.payment()));
        }
        return idempotency
                .storedAnswer(pool, merchantId, key)
                .map(answer -> answer == null || StoredAnswers.beforeOutcome(answer)
                        ? new CaptureOutcome.Charged(recorded.payment())
                        : new CaptureOutcome.Answered(answer));
    }

    /**
     * A PSP call that certainly was not sent ({@link PspGateway#neverSent}), once the caller tried to undo its claim of
     * the payment: undone, the key is released and the request refused {@code psp_unavailable} (503, Retry-After), to
     * be sent again with the same key; not undone, a resolver claimed the payment meanwhile and may have sent the call,
     * so the outcome is unknown and answered as a lost answer is ({@code outcomeUnknown}).
     *
     * @param call what was not sent, for the log: charge, authorization, capture or cancel
     */
    Uni<CaptureOutcome> neverSent(
            boolean undone,
            String call,
            UUID paymentId,
            Throwable failure,
            Supplier<Uni<CaptureOutcome>> outcomeUnknown) {
        String cause = failure.getClass().getSimpleName();
        if (!undone) {
            Log.warnf(
                    "PSP not called for the %s of payment %s (%s), but a resolver claimed it meanwhile: outcome unknown",
                    call, paymentId, cause);
            return outcomeUnknown.get();
        }
        Log.warnf("PSP not called for the %s of payment %s (%s): key released", call, paymentId, cause);
        metrics.capture("unavailable");
        if (failure instanceof PspSaturatedException) {
            metrics.shed("psp_limit");
        }
        return Uni.createFrom()
                .failure(new Refusal(
                        Refusal.Kind.UNAVAILABLE,
                        "psp_unavailable",
                        "Payment provider unavailable",
                        "The payment provider cannot be reached; nothing was charged. Retry with the same Idempotency-Key",
                        config.psp().unavailableRetryAfterSeconds()));
    }

    private Uni<CaptureOutcome> replay(Merchant merchant, Claim.Completed completed) {
        metrics.capture("replayed");
        if (!StoredAnswers.beforeOutcome(completed.answer()) || completed.resourceId() == null) {
            return Uni.createFrom().item(new CaptureOutcome.Replayed(completed.answer()));
        }
        return payments.find(pool, merchant.id(), completed.resourceId())
                .map(payment ->
                        new CaptureOutcome.Replayed(payment == null ? completed.answer() : answers.payment(payment)));
    }
}
