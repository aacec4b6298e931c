package com.payments.api.events;

import com.payments.api.config.ApiConfig;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/** Deletes the feed's events older than {@code payments.events.retention}, in bounded batches (SKIP LOCKED). */
@ApplicationScoped
public class EventRetentionJob {
    private final Pool pool;
    private final EventRepository events;
    private final ApiConfig.Events config;

    public EventRetentionJob(Pool pool, EventRepository events, ApiConfig config) {
        this.pool = pool;
        this.events = events;
        this.config = config.events();
    }

    @Scheduled(
            every = "${payments.events.cleanup-every:10m}",
            delayed = "1m",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        return purge(config.cleanupMaxBatches(), 0L)
                .invoke(deleted -> {
                    if (deleted > 0) {
                        Log.infof("Deleted %d events older than %s from the events feed", deleted, config.retention());
                    }
                })
                .replaceWithVoid();
    }

    /** Deletes expired events, at most batch size x max batches; returns how many. */
    public Uni<Long> purge(int batchesLeft, long total) {
        int batch = config.cleanupBatchSize();
        return events.deleteOlderThan(pool, config.retention(), batch).flatMap(deleted -> {
            long sum = total + deleted;
            return deleted < batch || batchesLeft <= 1 ? Uni.createFrom().item(sum) : purge(batchesLeft - 1, sum);
        });
    }
}
