package com.payments.api.common;

import com.payments.api.client.PspChargeLookup.Answer;
import com.payments.api.client.PspChargeResult;
import com.payments.api.client.PspGateway;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.psp.port.ChargeResult;
import java.time.Instant;

/**
 * Times one PSP call for {@code psp_calls}: {@link #start()} when the call goes out (inside its PSP permit), then
 * {@link #charge}, {@link #authorization}, {@link #capture}, {@link #voidCall} or {@link #lookup} with what came back.
 * V83 knows the kinds {@code charge} and {@code lookup}: an authorization, a capture and a void are {@code charge}
 * calls whose outcome says which. A call that never started (no permit) counts from now.
 */
public final class PspCallTimer {
    private static final int MAX_OUTCOME = 200;

    private Instant startedAt;
    private long startNanos;

    public void start() {
        startedAt = Instant.now();
        startNanos = System.nanoTime();
    }

    public PspCall charge(int attempt, PspChargeResult result, Throwable failure) {
        String outcome = failure != null
                ? failure(failure)
                : result.captured() ? "captured " + result.pspReference() : "declined " + result.declineCode();
        return done("charge", attempt, outcome);
    }

    /** A manual payment's authorization (a charge that holds the money): kind {@code charge}. */
    public PspCall authorization(int attempt, ChargeResult result, Throwable failure) {
        String outcome = failure != null
                ? failure(failure)
                : result.status() == ChargeResult.Status.AUTHORIZED
                        ? "authorized " + result.pspChargeId()
                        : "declined " + result.declineCode();
        return done("charge", attempt, outcome);
    }

    /**
     * The capture of {@code amount} of a manual payment's authorization: kind {@code charge} (the money is taken now),
     * its outcome naming the capture.
     */
    public PspCall capture(int attempt, long amount, ChargeResult result, Throwable failure) {
        String outcome = failure != null
                ? failure(failure)
                : result.status() == ChargeResult.Status.CAPTURED
                        ? "captured " + result.pspChargeId()
                        : "declined " + result.declineCode();
        return done("charge", attempt, "capture of " + amount + ": " + outcome);
    }

    /** The void of a manual payment's authorization: kind {@code charge}, its outcome naming the void. */
    public PspCall voidCall(int attempt, ChargeResult result, Throwable failure) {
        String outcome = failure != null
                ? failure(failure)
                : result.status() == ChargeResult.Status.CANCELED ? "canceled" : "declined " + result.declineCode();
        return done("charge", attempt, "void: " + outcome);
    }

    public PspCall lookup(int attempt, Answer answer, Throwable failure) {
        String outcome;
        if (failure != null) {
            outcome = failure(failure);
        } else if (answer instanceof Answer.Found found) {
            outcome =
                    found.succeeded() ? "found captured " + found.chargeId() : "found declined " + found.declineCode();
        } else {
            outcome = "not found";
        }
        return done("lookup", attempt, outcome);
    }

    /** Never sent (no permit, circuit open, connection refused) or sent without a definite answer. */
    private static String failure(Throwable failure) {
        return (PspGateway.neverSent(failure) ? "not sent " : "error ")
                + failure.getClass().getSimpleName();
    }

    private PspCall done(String kind, int attempt, String outcome) {
        Instant started = startedAt != null ? startedAt : Instant.now();
        long millis = startedAt != null ? (System.nanoTime() - startNanos) / 1_000_000 : 0;
        String text = outcome.length() > MAX_OUTCOME ? outcome.substring(0, MAX_OUTCOME) : outcome;
        return new PspCall(kind, attempt, started, (int) Math.min(millis, Integer.MAX_VALUE), text);
    }
}
