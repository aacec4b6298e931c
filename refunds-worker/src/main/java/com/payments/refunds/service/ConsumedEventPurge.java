package com.payments.refunds.service;

import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.repository.ConsumedEventRepository;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Forgets applied event ids past {@code refunds.dedup.retention}, in bounded batches, so that {@code consumed_events}
 * does not grow forever. Safe on many replicas (SKIP LOCKED).
 */
@ApplicationScoped
public class ConsumedEventPurge {
    private final Pool pool;
    private final ConsumedEventRepository consumed;
    private final RefundsConfig config;

    public ConsumedEventPurge(Pool pool, ConsumedEventRepository consumed, RefundsConfig config) {
        this.pool = pool;
        this.consumed = consumed;
        this.config = config;
    }

    @Scheduled(
            identity = "consumed-event-purge",
            every = "${refunds.dedup.purge-every:1h}",
            delayed = "1m",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        return purgeExpired()
                .invoke(deleted -> {
                    if (deleted > 0) {
                        Log.infof("Forgot %d consumed event ids past the retention", deleted);
                    }
                })
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf(e, "consumed-event purge failed; next run retries");
                    return 0L;
                })
                .replaceWithVoid();
    }

    /** Deletes expired event ids, at most batch-size x max-batches per call; returns how many. */
    public Uni<Long> purgeExpired() {
        return purge(config.dedup().purgeMaxBatches(), 0L);
    }

    private Uni<Long> purge(int batchesLeft, long total) {
        int batch = config.dedup().purgeBatchSize();
        return consumed.deleteOlderThan(
                        pool, config.consumerName(), config.dedup().retention(), batch)
                .flatMap(deleted -> {
                    long sum = total + deleted;
                    return deleted < batch || batchesLeft <= 1
                            ? Uni.createFrom().item(sum)
                            : purge(batchesLeft - 1, sum);
                });
    }
}
