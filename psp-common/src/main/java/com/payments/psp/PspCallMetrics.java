package com.payments.psp;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The timer {@code psp.calls} (Prometheus {@code psp_calls_seconds}) that every PSP adapter records: one sample per
 * port call with the tags {@code provider} ({@code sandbox}, {@code stripe}), {@code call} (the adapter's name of the
 * call: {@code charge}, {@code charge_lookup}, {@code charge_resend}, …) and {@code outcome} (the result's status in
 * lower case, {@code not_sent} when the concurrency limit shed the call). docs/stripe.md, "Operations".
 */
public final class PspCallMetrics {
    private final MeterRegistry registry;
    private final String provider;

    /** @param registry null records nothing (an adapter built outside a service, e.g. by a unit test) */
    public PspCallMetrics(MeterRegistry registry, String provider) {
        this.registry = registry;
        this.provider = provider;
    }

    /** {@code uni}, timed from subscription to its item or failure. */
    public <T> Uni<T> timed(String call, Uni<T> uni, Function<T, Enum<?>> outcome) {
        if (registry == null) {
            return uni;
        }
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return uni.onItemOrFailure().invoke((item, failure) -> Timer.builder("psp.calls")
                    .description("PSP calls by provider, call and outcome")
                    .tag("provider", provider)
                    .tag("call", call)
                    .tag(
                            "outcome",
                            failure != null
                                    ? "not_sent"
                                    : outcome.apply(item).name().toLowerCase(Locale.ROOT))
                    .register(registry)
                    .record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
        });
    }
}
