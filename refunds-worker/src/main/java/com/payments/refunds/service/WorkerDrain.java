package com.payments.refunds.service;

import com.payments.refunds.messaging.RefundCommandConsumer;
import io.quarkus.logging.Log;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduler;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The worker's graceful stop (SIGTERM): takes no new records and starts no new sync claim, lets the refunds already
 * claimed finish (the PSP's answer recorded, the record acknowledged), for up to {@code quarkus.shutdown.timeout}.
 * The Kafka connector then commits the offsets of the acknowledged records as it closes.
 *
 * <p>Why here and not in the connector's own graceful shutdown: Quarkus closes the reactive pool before the
 * application-scoped beans are destroyed, and the connector's drain runs only then, so the refunds it waited for failed
 * on "Pool closed" (left claimed until their lease expired). A {@link ShutdownEvent} observer runs while the pool, the
 * PSP client and the connector are all still open: the pool is created at startup ({@code SchemaVersion}'s check), so
 * its close comes after this event (Quarkus runs its shutdown tasks last registered first).
 */
@ApplicationScoped
public class WorkerDrain {
    private final Scheduler scheduler;
    private final RefundCommandConsumer consumer;
    private final PendingRefundSync sync;
    private final Duration timeout;

    public WorkerDrain(
            Scheduler scheduler,
            RefundCommandConsumer consumer,
            PendingRefundSync sync,
            @ConfigProperty(name = "quarkus.shutdown.timeout", defaultValue = "20s") Duration timeout) {
        this.scheduler = scheduler;
        this.consumer = consumer;
        this.sync = sync;
        this.timeout = timeout;
    }

    /** Before any other shutdown observer, so that everything the refunds in flight need still works. */
    void onStop(@Observes @Priority(Interceptor.Priority.LIBRARY_BEFORE) ShutdownEvent event) {
        long start = System.nanoTime();
        // no new run of any job (sync, gauges, purge); a run in progress goes on
        scheduler.pause();
        CompletableFuture<Void> records = consumer.stop().toCompletableFuture();
        CompletableFuture<Void> syncRun = sync.stop().toCompletableFuture();
        Log.infof(
                "stopping: %d refund-commands records in flight%s; waiting up to %d s for their outcomes",
                consumer.inFlight(), syncRun.isDone() ? "" : " and a pending-refund sync run", timeout.toSeconds());
        try {
            CompletableFuture.allOf(records, syncRun).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            Log.infof("stopping: refunds in flight settled in %d ms", elapsedMillis(start));
        } catch (TimeoutException e) {
            Log.warnf(
                    "stopping: %d records still in flight after %d s: their refunds stay claimed until the lease"
                            + " expires, then the next worker finishes them (same PSP key)",
                    consumer.inFlight(), timeout.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            Log.errorf(e.getCause(), "stopping: drain failed");
        }
    }

    private static long elapsedMillis(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
