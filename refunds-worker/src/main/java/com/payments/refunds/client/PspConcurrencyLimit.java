package com.payments.refunds.client;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.payments.refunds.config.RefundsConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * How many PSP calls this instance makes at once: Netflix's Gradient2 limit, fed with the round trip of every call.
 * It grows while the PSP's latency stays flat and shrinks when the latency rises (the PSP queues), between
 * {@code refunds.psp-limit.min} and the hard ceiling {@code refunds.psp-limit.max}. A call over the limit waits
 * (without a thread, first come first served) until a call ends. The refund-commands consumer admits records by
 * {@link #limit()}, so that wait stays short; should more than twice the ceiling wait, the call fails as an unknown
 * outcome and the refund is retried later like any other.
 */
@ApplicationScoped
public class PspConcurrencyLimit {

    /** A call that may run: when it started and how many ran then, for the limit's sample. */
    private static final class Permit {
        final long startNanos = System.nanoTime();
        final int inFlight;
        final AtomicBoolean released = new AtomicBoolean();
        volatile boolean started;

        Permit(int inFlight) {
            this.inFlight = inFlight;
        }
    }

    /** A call waiting for a permit; it is either granted one or cancelled, never both. */
    private static final class Waiter {
        final UniEmitter<? super Permit> emitter;
        final AtomicInteger state = new AtomicInteger(WAITING);
        volatile Permit permit;

        Waiter(UniEmitter<? super Permit> emitter) {
            this.emitter = emitter;
        }
    }

    private static final int WAITING = 0;
    private static final int GRANTED = 1;
    private static final int CANCELLED = 2;

    private final Limit limit;
    private final int maxWaiting;
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
    private int inFlight;

    public PspConcurrencyLimit(RefundsConfig config, MeterRegistry registry) {
        RefundsConfig.PspLimit settings = config.pspLimit();
        this.limit = Gradient2Limit.newBuilder()
                .initialLimit(settings.initial())
                .minLimit(settings.min())
                .maxConcurrency(settings.max())
                .build();
        this.maxWaiting = 2 * settings.max();
        Gauge.builder("refunds.psp.limit", this, PspConcurrencyLimit::limit)
                .description("Adaptive limit of concurrent PSP calls")
                .register(registry);
        Gauge.builder("refunds.psp.in.flight", this, PspConcurrencyLimit::inFlight)
                .description("PSP calls running")
                .register(registry);
    }

    /** The current limit (at most the configured ceiling). */
    public int limit() {
        return limit.getLimit();
    }

    /** PSP calls running now. */
    public synchronized int inFlight() {
        return inFlight;
    }

    /** Runs {@code call} once a slot is free; a failed or cancelled call (timeout) is sampled as a drop. */
    public <T> Uni<T> run(Supplier<Uni<T>> call) {
        return acquire().onItem().transformToUni(permit -> {
            permit.started = true;
            return call.get()
                    .onTermination()
                    .invoke((item, failure, cancelled) -> release(permit, failure != null || cancelled));
        });
    }

    private Uni<Permit> acquire() {
        return Uni.createFrom().emitter(emitter -> {
            Permit granted = null;
            Waiter waiter = null;
            synchronized (this) {
                if (waiting.isEmpty() && inFlight < limit.getLimit()) {
                    granted = grant();
                } else if (waiting.size() >= maxWaiting) {
                    emitter.fail(new PspUnavailableException(
                            "PSP concurrency limit reached, " + waiting.size() + " calls waiting"));
                    return;
                } else {
                    waiter = new Waiter(emitter);
                    waiting.addLast(waiter);
                }
            }
            if (granted != null) {
                emitter.complete(granted);
                return;
            }
            Waiter registered = waiter;
            emitter.onTermination(() -> terminated(registered));
        });
    }

    /** The waiter's caller went away (cancelled) or its permit was delivered. */
    private void terminated(Waiter waiter) {
        if (waiter.state.compareAndSet(WAITING, CANCELLED)) {
            synchronized (this) {
                waiting.remove(waiter);
            }
            return;
        }
        Permit permit = waiter.permit;
        if (permit != null && !permit.started) {
            // Cancelled between the grant and the start of its call: the permit was never used.
            release(permit, false);
        }
    }

    private void release(Permit permit, boolean dropped) {
        if (!permit.released.compareAndSet(false, true)) {
            return;
        }
        limit.onSample(permit.startNanos, System.nanoTime() - permit.startNanos, permit.inFlight, dropped);
        List<Waiter> starting = new ArrayList<>();
        synchronized (this) {
            inFlight--;
            while (!waiting.isEmpty() && inFlight < limit.getLimit()) {
                Waiter next = waiting.pollFirst();
                if (next.state.compareAndSet(WAITING, GRANTED)) {
                    next.permit = grant();
                    starting.add(next);
                }
            }
        }
        // Outside the lock: completing starts the waiting call.
        for (Waiter next : starting) {
            next.emitter.complete(next.permit);
        }
    }

    private Permit grant() {
        inFlight++;
        return new Permit(inFlight);
    }
}
