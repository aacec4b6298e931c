package com.payments.api.idempotency;

import com.payments.api.config.ApiConfig;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;

/**
 * Deletes idempotency keys whose payment or refund has been final for longer than the retention (24h-72h), in
 * bounded batches. A key whose resource is not final yet (in progress, a payment UNKNOWN, a refund PENDING) stays
 * however old it is: purged, its retry would create and charge a second payment. Safe on many replicas (SKIP LOCKED).
 */
@ApplicationScoped
public class IdempotencyCleanupJob {
    static final Duration MIN_RETENTION = Duration.ofHours(24);
    static final Duration MAX_RETENTION = Duration.ofHours(72);

    private final Pool pool;
    private final IdempotencyRepository keys;
    private final ApiConfig config;

    public IdempotencyCleanupJob(Pool pool, IdempotencyRepository keys, ApiConfig config) {
        this.pool = pool;
        this.keys = keys;
        this.config = config;
    }

    void validate(@Observes StartupEvent event) {
        Duration retention = config.idempotency().retention();
        if (retention.compareTo(MIN_RETENTION) < 0 || retention.compareTo(MAX_RETENTION) > 0) {
            throw new IllegalStateException(
                    "payments.idempotency.retention must be between 24h and 72h, not " + retention);
        }
    }

    @Scheduled(
            every = "${payments.idempotency.cleanup-every:5m}",
            delayed = "${payments.idempotency.cleanup-delay:1m}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        return purgeExpired()
                .invoke(deleted -> {
                    if (deleted > 0) {
                        Log.infof("Deleted %d expired idempotency keys", deleted);
                    }
                })
                .replaceWithVoid();
    }

    /** Deletes expired keys, at most batch-size x max-batches per call; returns how many. */
    public Uni<Long> purgeExpired() {
        return purge(config.idempotency().cleanupMaxBatches(), 0L);
    }

    private Uni<Long> purge(int batchesLeft, long total) {
        int batch = config.idempotency().cleanupBatchSize();
        return keys.deleteExpired(pool, config.idempotency().retention(), batch).flatMap(deleted -> {
            long sum = total + deleted;
            return deleted < batch || batchesLeft <= 1 ? Uni.createFrom().item(sum) : purge(batchesLeft - 1, sum);
        });
    }
}
