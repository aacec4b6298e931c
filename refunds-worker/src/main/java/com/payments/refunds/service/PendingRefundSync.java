package com.payments.refunds.service;

import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Re-checks refunds left PENDING: those whose retry is due (a PSP timeout, 5xx, open circuit) and those nobody
 * executed (the command was lost or the worker died before claiming it). Per instance; replicas share the work
 * through {@code FOR UPDATE SKIP LOCKED} and the claim's lease.
 */
@ApplicationScoped
public class PendingRefundSync {
    private final RefundExecutionService service;

    public PendingRefundSync(RefundExecutionService service) {
        this.service = service;
    }

    @Scheduled(
            identity = "pending-refund-sync",
            every = "${refunds.sync.every}",
            delayed = "${refunds.sync.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        return service.syncDue()
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
                .replaceWithVoid();
    }
}
