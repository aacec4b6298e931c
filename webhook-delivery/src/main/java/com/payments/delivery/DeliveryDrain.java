package com.payments.delivery;

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
 * The service's graceful stop (SIGTERM; docs/webhook-delivery.md, "Stopping"): leases no delivery and takes no
 * {@code payment-events} batch more, gives back the leased deliveries not yet sent, and waits, for up to {@code
 * quarkus.shutdown.timeout}, until every attempt already sent has its answer and its outcome written.
 *
 * <p>Why here: Quarkus closes the reactive pool before the application-scoped beans are destroyed and before the Kafka
 * connector's own graceful shutdown, so outcomes written then failed on "Pool closed", and their deliveries, left
 * leased, were sent again by the next sender once the lease ended. A {@link ShutdownEvent} observer runs while the pool,
 * the HTTP client and the connector are all still open (the pool is created at startup by {@code SchemaVersion}'s
 * check, so its close comes after this event: Quarkus runs its shutdown tasks last registered first).
 */
@ApplicationScoped
public class DeliveryDrain {
    private final Scheduler scheduler;
    private final FanOutConsumer consumer;
    private final WebhookSender sender;
    private final Duration timeout;

    public DeliveryDrain(
            Scheduler scheduler,
            FanOutConsumer consumer,
            WebhookSender sender,
            @ConfigProperty(name = "quarkus.shutdown.timeout", defaultValue = "20s") Duration timeout) {
        this.scheduler = scheduler;
        this.consumer = consumer;
        this.sender = sender;
        this.timeout = timeout;
    }

    /** Before any other shutdown observer, so that everything the attempts in flight need still works. */
    void onStop(@Observes @Priority(Interceptor.Priority.LIBRARY_BEFORE) ShutdownEvent event) {
        long start = System.nanoTime();
        scheduler.pause(); // the backlog gauge's query
        CompletableFuture<Void> batch = consumer.stop().toCompletableFuture();
        CompletableFuture<Void> attempts = sender.stop().toCompletableFuture();
        Log.infof(
                "stopping: %d webhook attempts in flight%s; waiting up to %d s for their outcomes",
                sender.inFlight(), batch.isDone() ? "" : " and a payment-events batch", timeout.toSeconds());
        try {
            CompletableFuture.allOf(batch, attempts).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            Log.infof(
                    "stopping: every attempt in flight has its outcome written after %d ms; %d deliveries given back"
                            + " unsent",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), sender.givenBack());
        } catch (TimeoutException e) {
            Log.warnf(
                    "stopping: %d attempts still in flight after %d s: their deliveries stay leased until the lease"
                            + " ends, then they are sent again",
                    sender.inFlight(), timeout.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            Log.errorf(e.getCause(), "stopping: drain failed");
        }
    }
}
