package com.payments.delivery;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** Metrics of webhook-delivery (docs/webhook-delivery.md "Metrics"). */
@ApplicationScoped
public class DeliveryMetrics {
    private final MeterRegistry registry;
    private final DeliveryRepository repository;
    private final AtomicLong due = new AtomicLong();
    private final Counter disabled;

    public DeliveryMetrics(MeterRegistry registry, DeliveryRepository repository) {
        this.registry = registry;
        this.repository = repository;
        this.disabled = Counter.builder("webhook.endpoints.disabled")
                .description("endpoints this instance disabled after failing for payments.webhooks.disable-after")
                .register(registry);
        Gauge.builder("webhook.deliveries.due", due, AtomicLong::get)
                .description(
                        "PENDING deliveries whose next attempt is due (refreshed every payments.webhooks.metrics-every)")
                .register(registry);
    }

    /** One attempt, by outcome: succeeded, retry (failed, tried again later), failed (given up). */
    void attempt(String outcome, Duration latency) {
        Counter.builder("webhook.deliveries")
                .description("delivery attempts by outcome")
                .tag("outcome", outcome)
                .register(registry)
                .increment();
        Timer.builder("webhook.attempt.latency")
                .description("from the start of an attempt (resolution included) to its outcome")
                .tag("outcome", outcome)
                .register(registry)
                .record(latency);
    }

    /** A delivery ended FAILED without an attempt (endpoint no longer ENABLED, or its event gone). */
    void notSent() {
        Counter.builder("webhook.deliveries")
                .tag("outcome", "not_sent")
                .register(registry)
                .increment();
    }

    void endpointDisabled() {
        disabled.increment();
    }

    @Scheduled(
            every = "${payments.webhooks.metrics-every}",
            delay = 1,
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> refresh() {
        return repository
                .due()
                .invoke(due::set)
                .onFailure()
                .invoke(e -> Log.warnf("webhook.deliveries.due not refreshed: %s", e.getMessage()))
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid();
    }
}
