package com.payments.api.resolver;

import com.payments.api.resolver.ResolverRepository.Snapshot;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Resolver and webhook metrics (Prometheus names): gauges {@code payments_unknown} (UNKNOWN payments),
 * {@code payments_unknown_oldest_age_seconds}, {@code payments_processing_stuck} (PROCESSING past their stuck-after
 * time), {@code payments_operations_open} (open operations items), {@code payments_operations_oldest_open_age_seconds}, refreshed after every resolver run; counters
 * {@code payments_resolutions_total{outcome}}, {@code payments_resolver_resends_total} and
 * {@code payments_webhooks_total{outcome}}.
 */
@Startup
@ApplicationScoped
public class ResolverMetrics {
    private final MeterRegistry registry;
    private final AtomicLong unknown = new AtomicLong();
    private final AtomicLong oldestUnknownSeconds = new AtomicLong();
    private final AtomicLong stuckProcessing = new AtomicLong();
    private final AtomicLong openOperations = new AtomicLong();
    private final AtomicLong oldestOpenOperationSeconds = new AtomicLong();

    public ResolverMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("payments.unknown", unknown, AtomicLong::get)
                .description("Payments in UNKNOWN")
                .register(registry);
        Gauge.builder("payments.unknown.oldest.age.seconds", oldestUnknownSeconds, AtomicLong::get)
                .description("Age of the oldest UNKNOWN payment")
                .register(registry);
        Gauge.builder("payments.processing.stuck", stuckProcessing, AtomicLong::get)
                .description("PROCESSING payments past their stuck-after time")
                .register(registry);
        Gauge.builder("payments.operations.open", openOperations, AtomicLong::get)
                .description("Open items in the operations queue")
                .register(registry);
        Gauge.builder("payments.operations.oldest.open.age.seconds", oldestOpenOperationSeconds, AtomicLong::get)
                .description("Age of the oldest open item in the operations queue (0 when none)")
                .register(registry);
        // Exported at 0 from the start, so that rate() and increase() see the first one.
        for (String outcome :
                List.of("captured", "failed", "amount_mismatch", "still_unknown", "escalated", "skipped", "error")) {
            resolution(outcome, 0);
        }
    }

    public void update(Snapshot snapshot) {
        unknown.set(snapshot.unknown());
        oldestUnknownSeconds.set(snapshot.oldestUnknownSeconds());
        stuckProcessing.set(snapshot.stuckProcessing());
        openOperations.set(snapshot.openOperations());
        oldestOpenOperationSeconds.set(snapshot.oldestOpenOperationSeconds());
    }

    /** outcome: captured, failed, amount_mismatch, still_unknown, escalated, skipped, error. */
    public void resolution(String outcome) {
        resolution(outcome, 1);
    }

    private void resolution(String outcome, int count) {
        registry.counter("payments.resolutions", "outcome", outcome).increment(count);
    }

    public void resend() {
        registry.counter("payments.resolver.resends").increment();
    }

    /** outcome: a {@code psp_webhook_events.outcome}, or duplicate, rejected. */
    public void webhook(String outcome) {
        registry.counter("payments.webhooks", "outcome", outcome).increment();
    }
}
