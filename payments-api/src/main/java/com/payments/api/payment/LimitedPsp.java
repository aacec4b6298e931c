package com.payments.api.payment;

import com.payments.api.client.PspAttentionException;
import com.payments.api.client.PspChargeLookup;
import com.payments.api.client.PspChargeLookup.Answer;
import com.payments.api.client.PspChargePendingException;
import com.payments.api.client.PspChargeResult;
import com.payments.api.client.PspGateway;
import com.payments.api.common.PspCallTimer;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.port.AmountRefusal;
import com.payments.psp.port.CaptureRequest;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.VoidRequest;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.function.Supplier;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;

/**
 * The PSP as the capture and the resolver call it: every charge and look-up under a permit of the instance's one
 * {@link PspConcurrencyLimit} (one PSP, one connection pool), taken outside {@link PspGateway} so that a call shed by
 * the limit never reaches its circuit breaker. The call's timer starts once the permit is held: {@code psp_calls}
 * records the PSP's time, not the wait.
 */
@ApplicationScoped
public class LimitedPsp {
    private final PspGateway psp;
    private final PspChargeLookup lookup;
    private final PspConcurrencyLimit limit;

    public LimitedPsp(PspGateway psp, PspChargeLookup lookup, PspConcurrencyLimit limit) {
        this.psp = psp;
        this.lookup = lookup;
        this.limit = limit;
    }

    /** {@link PspGateway#refusal}: what the PSP says of an amount before anything is stored. */
    public AmountRefusal refusal(long amount, String currency) {
        return psp.refusal(amount, currency);
    }

    /** {@link PspGateway#charge} with the payment id as the PSP's key. */
    public Uni<PspChargeResult> charge(
            UUID paymentId, long amount, String currency, String source, PspCallTimer timer) {
        return limited(timer, () -> psp.charge(paymentId, amount, currency, source));
    }

    /** {@link PspGateway#authorize} with the payment id as the PSP's key. */
    public Uni<ChargeResult> authorize(
            UUID paymentId, long amount, String currency, String source, PspCallTimer timer) {
        return limited(timer, () -> psp.authorize(paymentId, amount, currency, source));
    }

    /** {@link PspGateway#capture}: {@code amount} of the payment's authorization, under its one capture key. */
    public Uni<ChargeResult> capture(
            UUID paymentId, String pspReference, long amount, String currency, PspCallTimer timer) {
        return limited(
                timer, () -> psp.capture(new CaptureRequest(paymentId.toString(), pspReference, amount, currency)));
    }

    /** {@link PspGateway#voidAuthorization}: the payment's authorization, under its one void key. */
    public Uni<ChargeResult> voidAuthorization(UUID paymentId, String pspReference, PspCallTimer timer) {
        return limited(timer, () -> psp.voidAuthorization(new VoidRequest(paymentId.toString(), pspReference)));
    }

    /** {@link PspChargeLookup#find}: the charge of a reference, as the PSP reports it. */
    public Uni<Answer> find(ChargeQuery query, PspCallTimer timer) {
        return limited(timer, () -> lookup.find(query));
    }

    /** The call under a permit, timed from when it holds one. */
    private <T> Uni<T> limited(PspCallTimer timer, Supplier<Uni<T>> call) {
        return limit.run(
                () -> {
                    timer.start();
                    return call.get();
                },
                answer -> false,
                LimitedPsp::noSignOfThePsp);
    }

    /**
     * A failure that says nothing of the PSP's load, so the limit takes no sample of it: the circuit breaker refused the
     * call (it never left), or the PSP answered with a charge it holds unfinished or one that needs an operator (the
     * gateway fails on those so that the caller handles them, not because the PSP failed).
     */
    static boolean noSignOfThePsp(Throwable failure) {
        return failure instanceof CircuitBreakerOpenException
                || failure instanceof PspChargePendingException
                || failure instanceof PspAttentionException;
    }
}
