package com.payments.sandbox.stripe;

import com.payments.sandbox.Faults;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.SandboxClock;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Stripe's idempotency layer and the fault knobs every Stripe call shares: the first request of a key runs and its
 * answer is kept for {@code psp.stripe.idempotency-key-ttl} on the sandbox clock; the same key with the same parameters
 * replays it (with {@code Idempotent-Replayed: true}), with other parameters it is a 400 {@code idempotency_error}, and
 * while the first request still runs a 409 {@code idempotency_key_in_use}. Neither error is kept. Without a key every
 * request runs.
 */
@ApplicationScoped
public class StripeIdempotency {

    /** The stored answer of an idempotency key; {@code executing} until the original request's answer leaves. */
    static final class Stored {
        final String fingerprint;
        final Instant at;
        volatile Reply reply;
        volatile boolean executing = true;

        Stored(String fingerprint, Instant at) {
            this.fingerprint = fingerprint;
            this.at = at;
        }
    }

    /**
     * An answer and what to do once the request's processing time (the latency knob) has passed: the idempotency key
     * stops being "in use" then.
     */
    public record Handled(Reply reply, Runnable executed) {
        static Handled of(Reply reply) {
            return new Handled(reply, () -> {});
        }
    }

    private final ConcurrentHashMap<String, Stored> keys = new ConcurrentHashMap<>();
    private final SandboxClock clock;
    private final FaultSettings faults;
    private final long timeoutDelayMs;
    private final Duration keyTtl;

    public StripeIdempotency(SandboxClock clock, FaultSettings faults, SandboxConfig config) {
        this.clock = clock;
        this.faults = faults;
        this.timeoutDelayMs = config.timeoutDelay().toMillis();
        this.keyTtl = config.stripe().idempotencyKeyTtl();
    }

    /** The 429 knob, checked before anything else of a call; null when it does not fire. */
    Reply rateLimited() {
        return FaultSettings.roll(faults.current().rateLimitRate()) ? StripeErrors.rateLimited() : null;
    }

    /** The 429 and 500 knobs for reading calls, which record nothing; null when neither fires. */
    Reply readFault() {
        Reply limited = rateLimited();
        if (limited != null) {
            return limited;
        }
        return FaultSettings.roll(faults.current().errorRate()) ? StripeErrors.apiError() : null;
    }

    /** Runs a creating call of {@code key} (null: none) in {@code account} once, under the fault knobs. */
    Handled run(String account, String key, String fingerprint, Supplier<Reply> run) {
        Faults f = faults.current();
        if (key == null) {
            if (FaultSettings.roll(f.notReceivedRate())) {
                return Handled.of(StripeErrors.timeout().delayed(timeoutDelayMs));
            }
            Reply reply = FaultSettings.roll(f.errorRate()) ? StripeErrors.apiError() : run.get();
            return Handled.of(lost(reply, f));
        }
        Instant now = clock.now();
        String scoped = account + '\n' + key;
        Stored before = keys.get(scoped);
        if ((before == null || expired(before, now)) && FaultSettings.roll(f.notReceivedRate())) {
            // Lost on the way: nothing recorded, the key stays unused.
            return Handled.of(StripeErrors.timeout().delayed(timeoutDelayMs));
        }
        Stored fresh = new Stored(fingerprint, now);
        Stored held = keys.compute(scoped, (k, old) -> old == null || expired(old, now) ? fresh : old);
        if (held != fresh) {
            if (held.executing) {
                return Handled.of(StripeErrors.keyInUse());
            }
            if (!held.fingerprint.equals(fingerprint)) {
                return Handled.of(StripeErrors.keyReused(key));
            }
            return Handled.of(held.reply.asReplay());
        }
        // Stripe keeps 500s too: the same key answers the same 500 until the key expires.
        fresh.reply = FaultSettings.roll(f.errorRate()) ? StripeErrors.apiError() : run.get();
        return new Handled(lost(fresh.reply, f), () -> fresh.executing = false);
    }

    private boolean expired(Stored stored, Instant now) {
        return !stored.at.plus(keyTtl).isAfter(now);
    }

    /** The timeout knob: processed and kept, but the answer is held back (a lost response). */
    private Reply lost(Reply reply, Faults f) {
        return FaultSettings.roll(f.timeoutRate()) ? reply.delayed(timeoutDelayMs) : reply;
    }

    /** Forgets every idempotency key. */
    public void reset() {
        keys.clear();
    }
}
