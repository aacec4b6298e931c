package com.payments.api.capture;

import com.payments.api.Merchant;
import com.payments.api.common.ApiMetrics;
import com.payments.api.config.ApiConfig;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.IdempotencyService.Claim;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.payment.PaymentRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * A capture whose Idempotency-Key was claimed before: a completed key answers its stored answer byte for byte (or the
 * payment as it is now, if the answer was stored before an outcome); a key in flight or reused with another request is
 * refused ({@link IdempotencyService#refusalFor}).
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
