package com.payments.api.common;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;

/**
 * Business metrics (Prometheus names): {@code payments_captures_total{outcome}},
 * {@code payments_api_rejections_total{status,code}},
 * {@code payments_authorization_expiries_total{outcome}} (the expiry job's voids),
 * {@code payments_capture_batch_size{statement}} (captures per statement of the capture path),
 * {@code payments_refund_reservation_batch_size} (refund reservations per statement), {@code
 * payments_shed_total{reason}} (requests
 * answered 503 because the instance is saturated: {@code psp_limit}, {@code database}). The circuit
 * breaker's state comes from SmallRye Fault Tolerance ({@code ft_circuitbreaker_state_current}).
 */
@ApplicationScoped
public class ApiMetrics {
    private final MeterRegistry registry;
    // meters by tag value: looked up once, not built on every request
    private final Map<String, Counter> captures = new ConcurrentHashMap<>();
    private final Map<String, Counter> shed = new ConcurrentHashMap<>();
    private final Map<String, Counter> expiries = new ConcurrentHashMap<>();

    public ApiMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * outcome: captured, declined, unknown, unavailable, replayed; of manual capture authorized, manual_captured,
     * manual_canceled, manual_capturing, manual_canceling (answer lost), manual_refused.
     */
    public void capture(String outcome) {
        captures.computeIfAbsent(outcome, o -> registry.counter("payments.captures", "outcome", o))
                .increment();
    }

    /**
     * An authorization the expiry job worked. outcome: {@code expired} (voided, or already expired at the PSP),
     * {@code unknown} (the void's answer was lost: EXPIRING, for the resolver), {@code not_sent} (certainly not
     * voided: AUTHORIZED again, the next run tries again), {@code refused} (the PSP refused the void: EXPIRING, for the
     * resolver and then an operator), {@code error}.
     */
    public void expiry(String outcome) {
        expiries.computeIfAbsent(outcome, o -> registry.counter("payments.authorization.expiries", "outcome", o))
                .increment();
    }

    /** Records the size of each statement of this kind (claim, outcome). */
    public IntConsumer captureBatchSizes(String statement) {
        DistributionSummary sizes = DistributionSummary.builder("payments.capture.batch.size")
                .tag("statement", statement)
                .register(registry);
        return sizes::record;
    }

    /**
     * A request shed at saturation (503, nothing stored). reason: {@code psp_limit} (no PSP permit within {@code
     * payments.psp.limit.max-wait}), {@code database} (its first statement did not start within {@code
     * payments.capture.database-wait-budget}).
     */
    public void shed(String reason) {
        shed.computeIfAbsent(reason, r -> registry.counter("payments.shed", "reason", r))
                .increment();
    }

    /** Records the size of each refund reservation statement. */
    public IntConsumer refundReservationBatchSizes() {
        DistributionSummary sizes = DistributionSummary.builder("payments.refund.reservation.batch.size")
                .register(registry);
        return sizes::record;
    }

    public void rejected(int status, String code) {
        registry.counter("payments.api.rejections", "status", Integer.toString(status), "code", code)
                .increment();
    }
}
