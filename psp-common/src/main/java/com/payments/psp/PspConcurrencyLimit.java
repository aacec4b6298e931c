package com.payments.psp;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.smallrye.mutiny.subscription.UniSubscription;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * How many PSP calls this instance makes at once: Netflix's AIMD limit, between {@link PspLimitSettings#min()} and
 * the hard ceiling {@link PspLimitSettings#max()}. Each call that ends with an answer raises it by one (while at least
 * half of it is in use); a call that times out, cannot connect or gets a PSP error (the caller says which answers
 * are) cuts it by a tenth. Latency alone never cuts it: at the end of a burst the calls are slower because this
 * instance queues them, not because the PSP is overloaded, and Gradient2, which cut on a latency rise, shed most of the
 * next burst for that (docs/benchmarks.md). Calls that ran together when the PSP failed are one sign of overload, so
 * they cut once, as TCP cuts once per window: a failed call that started before the last cut does not cut again. A
 * call cancelled because its caller went away is no sample at all: when a load generator closes its connections at
 * the end of a run, thousands of calls are cancelled at once, and counting them as drops cut the limit from 2,048 to
 * 16 in a cascade (each freed permit went to a waiting call whose caller was gone too, which then cut again). Nor is
 * a failure the caller says tells nothing of the PSP, such as its circuit breaker's refusal ({@link #run(Supplier,
 * Predicate, Predicate)}).
 *
 * <p>A call over the limit waits, without a thread and first come first served, until a call ends; it fails with
 * {@link PspSaturatedException} (never sent) when its wait passes {@link PspLimitSettings#maxWait()} or when {@link
 * PspLimitSettings#maxWaiting()} calls already wait. That is the instance's true saturation. A waiting call gets its
 * permit (or its failure) on its own Vert.x context.
 */
public final class PspConcurrencyLimit {

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

    /** A call waiting for a permit; it is either granted one, expired or cancelled, exactly one of them. */
    private static final class Waiter {
        final UniEmitter<? super Permit> emitter;
        final Context context;
        final AtomicInteger state = new AtomicInteger(WAITING);
        volatile Permit permit;

        Waiter(UniEmitter<? super Permit> emitter, Context context) {
            this.emitter = emitter;
            this.context = context;
        }

        void emit(Runnable emission) {
            if (context == null || context == Vertx.currentContext()) {
                emission.run();
            } else {
                context.runOnContext(ignored -> emission.run());
            }
        }
    }

    private static final int WAITING = 0;
    private static final int GRANTED = 1;
    private static final int CANCELLED = 2;
    private static final Object GONE = new Object();

    private final Limit limit;
    private final PspLimitSettings settings;
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
    private int inFlight;
    /** When the limit was last cut; a failed call that started before it does not cut again. */
    private long lastCutNanos = System.nanoTime() - 1;

    /** @param metricPrefix gauges {@code <prefix>.limit} and {@code <prefix>.in.flight}, e.g. {@code payments.psp} */
    public PspConcurrencyLimit(PspLimitSettings settings, MeterRegistry registry, String metricPrefix) {
        this.settings = settings;
        this.limit = AIMDLimit.newBuilder()
                .initialLimit(settings.initial())
                .minLimit(settings.min())
                .maxLimit(settings.max())
                // only failures cut, never a round trip however long (AIMDLimit's default cuts past 5 s)
                .timeout(Long.MAX_VALUE, TimeUnit.NANOSECONDS)
                .build();
        Gauge.builder(metricPrefix + ".limit", this, PspConcurrencyLimit::limit)
                .description("Adaptive limit of concurrent PSP calls")
                .register(registry);
        Gauge.builder(metricPrefix + ".in.flight", this, PspConcurrencyLimit::inFlight)
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

    /** Calls waiting for a permit now. */
    public synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Runs {@code call} once a permit is free; fails with {@link PspSaturatedException} without calling it when the
     * wait runs out. A failed call (a timeout, no connection) cuts the limit; a cancelled one neither cuts nor raises it.
     */
    public <T> Uni<T> run(Supplier<Uni<T>> call) {
        return run(call, item -> false);
    }

    /**
     * As {@link #run(Supplier)}; an answer for which {@code pspError} holds (a 5xx, an adapter's "unknown" after a
     * lost connection) cuts the limit as a failure does. A decline is no PSP error.
     */
    public <T> Uni<T> run(Supplier<Uni<T>> call, Predicate<? super T> pspError) {
        return run(call, pspError, failure -> false);
    }

    /**
     * As {@link #run(Supplier, Predicate)}, for a caller whose call also fails when the PSP did not: a failure for
     * which {@code noSample} holds neither cuts nor raises the limit, as a cancelled call does. A circuit breaker that
     * refuses the call is one: it fails at once, so each refusal started after the last cut, and counted as drops a
     * few seconds of refusals cut the limit to its floor (docs/benchmarks.md, 2026-12-07). A PSP answer that the
     * caller turns into a failure (a charge the PSP holds unfinished) is another.
     */
    public <T> Uni<T> run(Supplier<Uni<T>> call, Predicate<? super T> pspError, Predicate<? super Throwable> noSample) {
        return Uni.createFrom().deferred(() -> permitted(call, pspError, noSample));
    }

    /** One subscription's call under a permit. */
    private <T> Uni<T> permitted(
            Supplier<Uni<T>> call, Predicate<? super T> pspError, Predicate<? super Throwable> noSample) {
        // the call's subscription, or GONE once its caller cancelled: a caller that cancels after the permit came but
        // before the call was subscribed would not reach the call (transformToUni has no inner subscription to cancel
        // yet), and the call would hold its permit until it ends on its own
        AtomicReference<Object> subscription = new AtomicReference<>();
        return acquire()
                .onItem()
                .transformToUni(permit -> {
                    permit.started = true;
                    return call.get()
                            .onTermination()
                            .invoke((item, failure, cancelled) -> release(
                                    permit,
                                    cancelled || failure != null && noSample.test(failure)
                                            ? null
                                            : failure != null || pspError.test(item)))
                            .onSubscription()
                            .invoke(started -> {
                                if (!subscription.compareAndSet(null, started)) {
                                    started.cancel();
                                }
                            });
                })
                .onCancellation()
                .invoke(() -> {
                    if (subscription.getAndSet(GONE) instanceof UniSubscription started) {
                        started.cancel();
                    }
                });
    }

    private Uni<Permit> acquire() {
        return Uni.createFrom().emitter(emitter -> {
            Permit granted = null;
            Waiter waiter = null;
            synchronized (this) {
                if (waiting.isEmpty() && inFlight < limit.getLimit()) {
                    granted = grant();
                } else if (waiting.size() >= settings.maxWaiting()) {
                    emitter.fail(new PspSaturatedException(
                            "PSP concurrency limit reached, " + waiting.size() + " calls waiting"));
                    return;
                } else {
                    waiter = new Waiter(emitter, Vertx.currentContext());
                    waiting.addLast(waiter);
                }
            }
            if (granted != null) {
                emitter.complete(granted);
                return;
            }
            Waiter registered = waiter;
            emitter.onTermination(() -> terminated(registered));
            expireAfter(registered, settings.maxWait().toMillis());
        });
    }

    private void expireAfter(Waiter waiter, long millis) {
        Runnable expire = () -> {
            if (waiter.state.compareAndSet(WAITING, CANCELLED)) {
                synchronized (this) {
                    waiting.remove(waiter);
                }
                waiter.emit(() -> waiter.emitter.fail(new PspSaturatedException(
                        "PSP concurrency limit reached: no permit within " + millis + " ms")));
            }
        };
        if (waiter.context != null) {
            waiter.context.owner().setTimer(Math.max(1, millis), id -> expire.run());
        } else {
            Infrastructure.getDefaultWorkerPool().schedule(expire, millis, TimeUnit.MILLISECONDS);
        }
    }

    /** The waiter's caller went away (cancelled), or its permit or failure was delivered. */
    private void terminated(Waiter waiter) {
        if (waiter.state.compareAndSet(WAITING, CANCELLED)) {
            synchronized (this) {
                waiting.remove(waiter);
            }
            return;
        }
        Permit permit = waiter.permit;
        if (waiter.state.get() == GRANTED && !permit.started) {
            // Cancelled between the grant and the start of its call: the permit was never used.
            release(permit, null);
        }
    }

    /** @param dropped whether the call failed; null when its caller went away, which says nothing about the PSP */
    private void release(Permit permit, Boolean dropped) {
        if (!permit.released.compareAndSet(false, true)) {
            return;
        }
        if (dropped != null) {
            sample(permit, dropped);
        }
        List<Waiter> starting = new ArrayList<>();
        synchronized (this) {
            inFlight--;
            while (!waiting.isEmpty() && inFlight < limit.getLimit()) {
                Waiter next = waiting.pollFirst();
                // the permit before the state: a cancellation that sees GRANTED must find the permit to give back
                next.permit = new Permit(inFlight + 1);
                if (next.state.compareAndSet(WAITING, GRANTED)) {
                    inFlight++;
                    starting.add(next);
                }
            }
        }
        // Outside the lock: completing starts the waiting call.
        for (Waiter next : starting) {
            next.emit(() -> next.emitter.complete(next.permit));
        }
    }

    private Permit grant() {
        inFlight++;
        return new Permit(inFlight);
    }

    private void sample(Permit permit, boolean dropped) {
        long now = System.nanoTime();
        synchronized (limit) {
            if (dropped) {
                if (permit.startNanos - lastCutNanos <= 0) {
                    return;
                }
                lastCutNanos = now;
            }
            limit.onSample(permit.startNanos, now - permit.startNanos, permit.inFlight, dropped);
        }
    }
}
