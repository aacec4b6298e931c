package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.common.ApiMetrics;
import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.IdempotencyService.Claim;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.payment.PaymentOutcomeService.Recorded;
import com.payments.api.payment.PaymentRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * A capture whose Idempotency-Key was claimed before: a completed key answers its stored answer byte for byte (or the
 * payment as it is now, if the answer was stored before an outcome); a key in flight or reused with another request is
 * refused ({@link IdempotencyService#refusalFor}). Also the answer of a request whose outcome another writer recorded
 * first ({@link #afterOutcome}).
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
