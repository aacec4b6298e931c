package com.payments.api.client;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspSaturatedException;
import com.payments.psp.port.AmountRefusal;
import com.payments.psp.port.CaptureRequest;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.VoidRequest;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;

/**
 * Charges through the service's {@link PspPort} (the adapter {@code psp.provider} picks) with the payment id as its
 * idempotency key and reference, under a timeout and a circuit breaker (values in application.properties:
 * {@code quarkus.fault-tolerance."com.payments.api.client.PspGateway/charge".*}). A decline is a normal answer and
 * never counts against the circuit, nor does a charge the PSP holds unfinished (Stripe's {@code requires_action});
 * another UNKNOWN answer (5xx, a conflict on the key, a connection lost) and timeouts do. How many calls run at once
 * is the callers' {@link PspConcurrencyLimit}, taken outside this bean, so that a call shed by the limit never reaches the circuit breaker and the timeout covers the PSP's round trip only. Each call's
 * round trip is timed: {@code payments_psp_latency_seconds{outcome=captured|refused|error}}.
 */
@ApplicationScoped
public class PspGateway {
    private final PspPort port;
    private final MeterRegistry registry;
    private final Map<String, Timer> latency = new ConcurrentHashMap<>();

    public PspGateway(PspPort port, MeterRegistry registry) {
        this.port = port;
        this.registry = registry;
    }

    /**
     * What the active PSP says of an amount before anything is stored: null when it takes it, else why not (the
     * sandbox takes every amount; Stripe's units differ from ISO 4217's for some currencies: docs/stripe.md,
     * "Currencies"). {@link com.payments.api.payment.AmountLimits#requireTakenByPsp} turns it into the refusal.
     *
     * @param amount ISO 4217 minor units
     */
    public AmountRefusal refusal(long amount, String currency) {
        return port.refusal(amount, currency);
    }

    /**
     * @return a definite answer; fails with {@link org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException},
     *     {@link PspUnavailableException} or {@link PspChargePendingException} when the outcome is unknown, and with
     *     {@link CircuitBreakerOpenException} or {@link PspNotSentException} when the PSP was never called (see
     *     {@link #neverSent}).
     */
    @Timeout(2000)
    // MicroProfile's defaults: opens at 50 % failures of 20 calls, half-opens after 5 s, closes after 1 success
    @CircuitBreaker(skipOn = PspChargePendingException.class)
    public Uni<PspChargeResult> charge(UUID paymentId, long amount, String currency, String source) {
        long start = System.nanoTime();
        return port.charge(new ChargeRequest(paymentId.toString(), amount, currency, source))
                .map(result -> switch (result.status()) {
                    case CAPTURED -> new PspChargeResult(true, result.pspChargeId(), null);
                    case DECLINED -> new PspChargeResult(false, result.pspChargeId(), result.declineCode());
                    default -> throw notDefinite(result);
                })
                .onItemOrFailure()
                .invoke((result, failure) -> latency(
                                failure != null ? "error" : result.captured() ? "captured" : "refused")
                        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
    }

    /**
     * Authorizes (manual capture) with the payment id as the PSP's key: AUTHORIZED or DECLINED; fails as
     * {@link #charge} does when the outcome is unknown or the PSP was never called.
     */
    @Timeout(2000)
    @CircuitBreaker(skipOn = PspChargePendingException.class)
    public Uni<ChargeResult> authorize(UUID paymentId, long amount, String currency, String source) {
        return definite(
                port.authorize(new ChargeRequest(paymentId.toString(), amount, currency, source)),
                ChargeResult.Status.AUTHORIZED);
    }

    /**
     * Captures {@code amount} of an authorization under the PSP key {@code capture-<payment id>}: CAPTURED or DECLINED
     * (nothing captured; a stable code); fails as {@link #charge} does when unknown or never sent.
     */
    @Timeout(2000)
    @CircuitBreaker(skipOn = PspChargePendingException.class)
    public Uni<ChargeResult> capture(CaptureRequest request) {
        return definite(port.capture(request), ChargeResult.Status.CAPTURED);
    }

    /**
     * Voids an authorization under the PSP key {@code void-<payment id>}: CANCELED or DECLINED (nothing released);
     * fails as {@link #charge} does when unknown or never sent.
     */
    @Timeout(2000)
    @CircuitBreaker(skipOn = PspChargePendingException.class)
    public Uni<ChargeResult> voidAuthorization(VoidRequest request) {
        return definite(port.voidAuthorization(request), ChargeResult.Status.CANCELED);
    }

    /** The answer if it is {@code success} or DECLINED; anything else fails as not definite. */
    private Uni<ChargeResult> definite(Uni<ChargeResult> call, ChargeResult.Status success) {
        long start = System.nanoTime();
        return call.map(result -> {
                    if (result.status() == success || result.status() == ChargeResult.Status.DECLINED) {
                        return result;
                    }
                    throw notDefinite(result);
                })
                .onItemOrFailure()
                .invoke((result, failure) -> latency(
                                failure != null
                                        ? "error"
                                        : result.status() == ChargeResult.Status.DECLINED ? "refused" : "captured")
                        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
    }

    private Timer latency(String outcome) {
        return latency.computeIfAbsent(outcome, o -> Timer.builder("payments.psp.latency")
                .tag("outcome", o)
                .publishPercentileHistogram()
                .register(registry));
    }

    /**
     * The failure standing for an answer that is not definite: never sent; refused in a way only an operator can
     * settle ({@link PspAttentionException}); held by the PSP but not finished (it has the charge's id: no PSP
     * failure); or sent with an unknown outcome.
     */
    static RuntimeException notDefinite(ChargeResult result) {
        if (result.neverSent()) {
            return new PspNotSentException("PSP not reached: " + result.detail());
        }
        if (result.needsAttention()) {
            return new PspAttentionException(result.detail(), result.pspChargeId());
        }
        if (result.pspChargeId() != null) {
            return new PspChargePendingException(
                    result.pspChargeId(), "PSP charge " + result.pspChargeId() + " is " + result.detail());
        }
        return new PspUnavailableException("PSP answered " + result.status() + " " + result.detail());
    }

    /** The PSP's id of the charge that a not-definite answer named ({@code pi_…} of a pending charge), else null. */
    public static String pspChargeIdOf(Throwable failure) {
        if (failure instanceof PspChargePendingException pending) {
            return pending.pspChargeId();
        }
        return failure instanceof PspAttentionException attention ? attention.pspChargeId() : null;
    }

    /**
     * True when the failure proves the PSP never received the charge (so the payment may be dropped): the circuit was
     * open, the instance's PSP limit was saturated ({@link PspSaturatedException}), or the adapter's verdict was
     * {@link ChargeResult.Status#NOT_SENT} (the first connect of the call's first attempt failed:
     * {@link PspNotSentException}). Never inferred from a connection error: after an attempt that may have reached the
     * PSP, a resend that cannot connect is UNKNOWN.
     */
    public static boolean neverSent(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof CircuitBreakerOpenException
                    || t instanceof PspSaturatedException
                    || t instanceof PspNotSentException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
