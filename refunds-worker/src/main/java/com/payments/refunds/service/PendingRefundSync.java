package com.payments.refunds.service;

import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Re-checks refunds left PENDING: those whose retry is due (a PSP timeout, 5xx, open circuit) and those nobody
 * executed (the command was lost or the worker died before claiming it). Per instance; replicas share the work
 * through {@code FOR UPDATE SKIP LOCKED} and the claim's lease. {@link #stop} (the worker's shutdown) lets the run in
 * progress finish the refunds it has sent and gives back the rest of its batch.
 */
@ApplicationScoped
public class PendingRefundSync {
    private final RefundExecutionService service;
    /** Guarded by {@code this}. */
    private boolean stopping;
    /** The run in progress, or the last one (completed); guarded by {@code this}. */
    private CompletableFuture<Void> running = CompletableFuture.completedFuture(null);

    public PendingRefundSync(RefundExecutionService service) {
        this.service = service;
    }

    @Scheduled(
            identity = "pending-refund-sync",
            every = "${refunds.sync.every}",
            delayed = "${refunds.sync.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            if (stopping) {
                return Uni.createFrom().voidItem();
            }
            running = done;
        }
        return service.syncDue(this::stopping)
                .invoke(claimed -> {
                    if (claimed > 0) {
                        Log.infof("pending-refund sync: %d refunds re-checked", claimed);
                    }
                })
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf(e, "pending-refund sync failed; next run retries");
                    return 0;
                })
                .replaceWithVoid()
                .eventually(() -> done.complete(null));
    }

    /**
     * Starts no more runs; the run in progress sends no more refunds (the rest of its batch is given back, due at
     * once for another worker) and records the answers of those it sent. Completes when that run has ended.
     */
    public synchronized CompletionStage<Void> stop() {
        stopping = true;
        return running;
    }

    private synchronized boolean stopping() {
        return stopping;
    }
}
