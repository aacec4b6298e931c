package com.payments.refunds.service;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * Business metrics of refunds-worker (Prometheus names, docs/refunds.md "Metrics"): counters
 * {@code refunds_outcomes_total{outcome}}, {@code refunds_dead_lettered_total{reason}} and
 * {@code refunds_commands_handed_off_total}, the histogram
 * {@code refunds_psp_latency_seconds{call,outcome}}, the summaries {@code refunds_outcome_batch_size} (command outcomes
 * per statement) and {@code refunds_claim_batch_size} (command claims per statement), and the gauges {@code refunds_pending},
 * {@code refunds_pending_oldest_age_seconds} and {@code refunds_dlq_records}, refreshed by {@link RefundsGauges}.
 */
@ApplicationScoped
public class RefundsMetrics {
    private static final List<String> OUTCOMES = List.of("succeeded", "failed", "rejected", "not_found", "unknown");
    private static final List<String> DEAD_LETTER_REASONS = List.of("invalid_command", "failed");
    private final MeterRegistry registry;
    // meters by tag values: looked up once, not built on every refund
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<String, Counter> deadLettered = new ConcurrentHashMap<>();
    private final Map<String, Timer> pspLatency = new ConcurrentHashMap<>();
    private final AtomicLong pending = new AtomicLong();
    private final AtomicLong oldestPendingSeconds = new AtomicLong();
    private final AtomicLong dlqRecords = new AtomicLong();
    private final Counter handedOff;

    public RefundsMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("refunds.pending", pending, AtomicLong::get)
                .description("Refunds in PENDING")
                .register(registry);
        Gauge.builder("refunds.pending.oldest.age.seconds", oldestPendingSeconds, AtomicLong::get)
                .description("Age of the oldest PENDING refund (0 when none)")
                .register(registry);
        Gauge.builder("refunds.dlq.records", dlqRecords, AtomicLong::get)
                .description("Records in the refund-commands dead-letter topic (end minus start offsets)")
                .register(registry);
        handedOff = Counter.builder("refunds.commands.handed.off")
                .description("refund-commands records whose refund was handed to the sync because its lane was full")
                .register(registry);
        // Exported at 0 from the start, so that rate() and increase() see the first one.
        OUTCOMES.forEach(o -> outcomes.put(o, registry.counter("refunds.outcomes", "outcome", o)));
        DEAD_LETTER_REASONS.forEach(r -> deadLettered.put(r, registry.counter("refunds.dead.lettered", "reason", r)));
    }

    /** An outcome transaction committed: succeeded, failed (declined), rejected, not_found or unknown. */
    public void outcome(String outcome) {
        outcomes.computeIfAbsent(outcome, o -> registry.counter("refunds.outcomes", "outcome", o))
                .increment();
    }

    /** A refund-commands record was nacked to the dead-letter topic; reason: invalid_command or failed. */
    public void deadLettered(String reason) {
        deadLettered
                .computeIfAbsent(reason, r -> registry.counter("refunds.dead.lettered", "reason", r))
                .increment();
    }

    /** A record's refund was handed to the pending-refund sync: its payment's lane was full. */
    public void handedOff() {
        handedOff.increment();
    }

    /** Records the size of each command outcome statement. */
    public IntConsumer outcomeBatchSizes() {
        DistributionSummary sizes = DistributionSummary.builder("refunds.outcome.batch.size")
                .description("Command outcomes (PSP success or decline) per statement")
                .register(registry);
        return sizes::record;
    }

    public IntConsumer claimBatchSizes() {
        DistributionSummary sizes = DistributionSummary.builder("refunds.claim.batch.size")
                .description("Command claims per statement")
                .register(registry);
        return sizes::record;
    }

    /** call: refund or lookup; outcome: succeeded, failed, rejected, not_found, or error (no answer). */
    public void pspLatency(String call, String outcome, long nanos) {
        pspLatency
                .computeIfAbsent(call + ' ' + outcome, k -> Timer.builder("refunds.psp.latency")
                        .tag("call", call)
                        .tag("outcome", outcome)
                        .publishPercentileHistogram()
                        .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    void pending(long count, long oldestSeconds) {
        pending.set(count);
        oldestPendingSeconds.set(oldestSeconds);
    }

    void dlqRecords(long records) {
        dlqRecords.set(records);
    }
}
