package com.payments.refunds.client;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundQuery;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import com.payments.refunds.Refund;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.service.RefundsMetrics;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;

/**
 * Refunds through the service's {@link PspPort} (the adapter {@code psp.provider} picks), with the refund id as the
 * idempotency key and reference, so any number of sends of one refund move money at most once. Definite answers
 * (success, decline, pending, rejection, not found) are items and never count as circuit-breaker failures; an UNKNOWN
 * answer and timeouts are failed {@code Uni}s ({@link PspUnavailableException}) and do, as does a call that found the
 * instance's limit of concurrent PSP calls saturated ({@link com.payments.psp.PspSaturatedException}, never sent).
 * Every call runs under {@link PspConcurrencyLimit} (psp-common), inside the timeout.
 */
@ApplicationScoped
public class PspClient {
    /**
     * The look-up only reads: it never re-sends (the sync re-sends on NOT_FOUND). Both adapters' refund look-ups by
     * our refund id have no lag (the sandbox's {@code ?reference=}, Stripe's refund list of the PaymentIntent), so an
     * absent refund was never made and re-sending it with the same key moves money at most once.
     */
    private static final Instant READ_ONLY = Instant.EPOCH;

    private final PspPort port;
    private final PspConcurrencyLimit limit;
    private final RefundsMetrics metrics;
    /** {@code refunds.psp-limit.call-timeout}: inside the limit, so that a PSP that does not answer cuts it. */
    private final Duration callTimeout;

    @Inject
    public PspClient(PspPort port, PspConcurrencyLimit limit, RefundsMetrics metrics, RefundsConfig config) {
        this(port, limit, metrics, config.pspLimit().callTimeout());
    }

    PspClient(PspPort port, PspConcurrencyLimit limit, RefundsMetrics metrics, Duration callTimeout) {
        this.port = port;
        this.limit = limit;
        this.metrics = metrics;
        this.callTimeout = callTimeout;
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> refund(Refund refund) {
        return call("refund", () -> port.refund(request(refund)));
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> lookup(Refund refund) {
        return call("lookup", () -> port.lookUpRefund(new RefundQuery(request(refund), null, READ_ONLY)));
    }

    private static RefundRequest request(Refund refund) {
        return new RefundRequest(
                refund.id().toString(),
                refund.paymentId().toString(),
                refund.chargeReference(),
                refund.amount(),
                refund.currency());
    }

    /**
     * One call under the concurrency limit, interpreted; its latency (from the request's start, not counting the wait
     * for a permit) goes to {@code refunds_psp_latency_seconds{call,outcome}}. A call cut by the timeout is cancelled
     * and counts as {@code error}, like any call without an answer.
     */
    private Uni<PspOutcome> call(String call, Supplier<Uni<RefundResult>> request) {
        long[] started = {0};
        return limit.run(
                        () -> {
                            started[0] = System.nanoTime();
                            return request.get()
                                    .ifNoItem()
                                    .after(callTimeout)
                                    .failWith(() -> new PspUnavailableException(
                                            "no answer from the PSP within " + callTimeout.toMillis() + " ms"));
                        },
                        PspClient::pspError)
                .map(PspClient::outcome)
                .onTermination()
                .invoke((outcome, failure, cancelled) -> {
                    if (started[0] != 0) {
                        metrics.pspLatency(call, outcomeLabel(outcome), System.nanoTime() - started[0]);
                    }
                });
    }

    /**
     * An answer that cuts the PSP limit: UNKNOWN without an operator's attention is a 5xx, 408, 429 or a connection
     * lost (the adapters answer it instead of failing). A failed refund or an attention case is an answer.
     */
    static boolean pspError(RefundResult result) {
        return result.status() == RefundResult.Status.UNKNOWN && !result.needsAttention();
    }

    /** A definite answer, or {@link PspUnavailableException} (the outcome is unknown). */
    static PspOutcome outcome(RefundResult result) {
        return switch (result.status()) {
            case SUCCEEDED -> new PspOutcome.Succeeded(result.pspRefundId());
            case FAILED -> new PspOutcome.Failed(result.failureCode());
            case PENDING -> new PspOutcome.Pending(result.pspRefundId());
            case NOT_FOUND -> new PspOutcome.NotFound();
            case UNKNOWN -> {
                if (result.needsAttention()) {
                    yield new PspOutcome.Rejected(result.detail());
                }
                throw new PspUnavailableException("PSP refund outcome unknown: " + result.detail());
            }
        };
    }

    private static String outcomeLabel(PspOutcome outcome) {
        if (outcome instanceof PspOutcome.Succeeded) {
            return "succeeded";
        }
        if (outcome instanceof PspOutcome.Failed) {
            return "failed";
        }
        if (outcome instanceof PspOutcome.Pending) {
            return "pending";
        }
        if (outcome instanceof PspOutcome.Rejected) {
            return "rejected";
        }
        if (outcome instanceof PspOutcome.NotFound) {
            return "not_found";
        }
        return "error";
    }
}
