package com.payments.relay.service;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/** The relay's meters: backlog gauges (refreshed from the database), publish rate and errors. */
public final class RelayMetrics {
    private final AtomicLong unsent = new AtomicLong();
    private final AtomicLong oldestAgeMillis = new AtomicLong();
    private final AtomicLong leader = new AtomicLong();
    private final Counter published;
    private final Counter publishErrors;

    public RelayMetrics(MeterRegistry registry) {
        Gauge.builder("outbox.unsent.rows", unsent, AtomicLong::get)
                .description("Outbox rows not yet published")
                .register(registry);
        Gauge.builder("outbox.oldest.unsent.age", oldestAgeMillis, a -> a.get() / 1000.0)
                .description("Age of the oldest unpublished outbox row")
                .baseUnit("seconds")
                .register(registry);
        Gauge.builder("outbox.relay.leader", leader, AtomicLong::get)
                .description("1 while this replica holds the publisher lock")
                .register(registry);
        published = Counter.builder("outbox.published")
                .description("Outbox rows acknowledged by Kafka")
                .register(registry);
        publishErrors = Counter.builder("outbox.publish.errors")
                .description("Failed publish rounds (broker or database)")
                .register(registry);
    }

    void backlog(long rows, double oldestAgeSeconds) {
        unsent.set(rows);
        oldestAgeMillis.set((long) (oldestAgeSeconds * 1000));
    }

    void leader(boolean isLeader) {
        leader.set(isLeader ? 1 : 0);
    }

    void published(int count) {
        published.increment(count);
    }

    void publishError() {
        publishErrors.increment();
    }

    /** Events published so far (Micrometer keeps counts as doubles; this is a count, never money). */
    public long publishedTotal() {
        return (long) published.count();
    }

    /** Failed rounds so far. */
    public long publishErrorsTotal() {
        return (long) publishErrors.count();
    }
}
