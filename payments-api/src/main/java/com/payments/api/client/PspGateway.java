package com.payments.api.client;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspSaturatedException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpClosedException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * Calls the PSP with the payment id as its Idempotency-Key and charge reference, under a timeout and a circuit breaker
 * (values in application.properties: {@code quarkus.fault-tolerance."com.payments.api.client.PspGateway/charge".*}).
 * A decline or a 4xx is a normal answer and never counts against the circuit; 5xx, timeouts and connection errors
 * do. How many calls run at once is the callers' {@link PspConcurrencyLimit}, taken outside this bean, so that a call
 * shed by the limit never reaches the circuit breaker and the timeout covers the PSP's round trip only. Each call's
 * round trip is timed: {@code payments_psp_latency_seconds{outcome=captured|refused|error}}.
 */
@ApplicationScoped
public class PspGateway {
    private final PspClient client;
    private final MeterRegistry registry;
    private final Map<String, Timer> latency = new ConcurrentHashMap<>();

    public PspGateway(@RestClient PspClient client, MeterRegistry registry) {
        this.client = client;
        this.registry = registry;
    }

    /**
     * @return a definite answer; fails with {@link org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException}
     *     or {@link PspUnavailableException} or an I/O error when the outcome is unknown, and with
     *     {@link CircuitBreakerOpenException} or a {@link ConnectException} when the PSP was never called (see
     *     {@link #neverSent}).
     */
    @Timeout(2000)
    @CircuitBreaker(requestVolumeThreshold = 20, failureRatio = 0.5, delay = 5000, successThreshold = 1)
    public Uni<PspChargeResult> charge(UUID paymentId, long amount, String currency, String source) {
        String reference = paymentId.toString();
        long start = System.nanoTime();
        return client.charge(reference, new PspChargeRequest(reference, amount, currency, source))
                // Once more at once, with the same idempotency key: the PSP answers a repeated key with its first
                // result, so this never charges twice. Inside the circuit breaker, so a pooled connection that the PSP
                // had just closed is no PSP failure.
                .onFailure(PspGateway::closedBeforeAnswer)
                .retry()
                .atMost(1)
                .map(response -> toResult(response.getStatus(), body(response)))
                .onItemOrFailure()
                .invoke((result, failure) -> latency(
                                failure != null ? "error" : result.captured() ? "captured" : "refused")
                        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
    }

    private Timer latency(String outcome) {
        return latency.computeIfAbsent(outcome, o -> Timer.builder("payments.psp.latency")
                .tag("outcome", o)
                .publishPercentileHistogram()
                .register(registry));
    }

    /** The answer's body as a charge (an error answer fills only {@code error}); null when it is not JSON of one. */
    private static PspCharge body(Response response) {
        try {
            return response.readEntity(PspCharge.class);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** What a PSP answer means: a definite result, or a {@link PspUnavailableException} when it is unknown. */
    static PspChargeResult toResult(int status, PspCharge charge) {
        if (status == 200 && charge != null && charge.succeeded() && charge.id() != null) {
            return new PspChargeResult(true, charge.id(), null);
        }
        if (status == 200 && charge != null && charge.declined()) {
            return new PspChargeResult(
                    false, charge.id(), charge.declineCode() == null ? "declined" : charge.declineCode());
        }
        String code =
                charge == null || charge.error() == null ? null : charge.error().code();
        if (status == 409 || (status == 422 && code != null && code.startsWith("idempotency"))) {
            // The PSP holds a charge under this key (the payment id): still in flight, or made from another body. It
            // may have moved money, so this is no refusal: the resolver asks the PSP by reference. Never FAILED.
            throw new PspUnavailableException(
                    "PSP answered " + status + " " + code + ": a charge may exist under this key");
        }
        if (status >= 400 && status < 500 && status != 408 && status != 429) {
            return new PspChargeResult(false, null, code != null ? code : "psp_rejected_" + status);
        }
        throw new PspUnavailableException("PSP answered " + status);
    }

    /**
     * True when the failure proves the PSP never received the charge (so the payment may be dropped): the circuit was
     * open, the instance's PSP limit was saturated ({@link PspSaturatedException}), or no connection could be made.
     */
    /**
     * The connection closed before any answer: typically a kept-alive connection the PSP closed as the request went
     * out on it (servers close idle connections at will). A timeout is not this: the PSP may still be working.
     */
    static boolean closedBeforeAnswer(Throwable failure) {
        return anyCause(
                failure,
                t -> t instanceof HttpClosedException
                        || (t instanceof IOException
                                && !(t instanceof ConnectException)
                                && !(t instanceof InterruptedIOException)));
    }

    public static boolean neverSent(Throwable failure) {
        return anyCause(
                failure,
                t -> t instanceof CircuitBreakerOpenException
                        || t instanceof PspSaturatedException
                        || t instanceof ConnectException);
    }

    private static boolean anyCause(Throwable failure, Predicate<Throwable> test) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (test.test(t)) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
