package com.payments.api.service;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.TimeUnit;

/**
 * Business metrics (Prometheus names): {@code payments_captures_total{outcome}},
 * {@code payments_api_rejections_total{status,code}}, {@code payments_psp_latency_seconds{outcome}}. The circuit
 * breaker's state comes from SmallRye Fault Tolerance ({@code ft_circuitbreaker_state_current}).
 */
@ApplicationScoped
public class ApiMetrics {
    private final MeterRegistry registry;

    public ApiMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** outcome: captured, declined, unknown, unavailable, replayed. */
    public void capture(String outcome) {
        registry.counter("payments.captures", "outcome", outcome).increment();
    }

    public void rejected(int status, String code) {
        registry.counter("payments.api.rejections", "status", Integer.toString(status), "code", code)
                .increment();
    }

    public void pspLatency(String outcome, long nanos) {
        Timer.builder("payments.psp.latency")
                .tag("outcome", outcome)
                .publishPercentileHistogram()
                .register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
    }
}
