package com.payments.sandbox;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A charge as the sandbox keeps it: captured at once ({@code POST /v1/charges}), or an authorization ({@code POST
 * /v1/authorizations}) that moves once from {@code authorized} to {@code succeeded} (captured), or to {@code canceled}
 * (voided, or expired on the sandbox clock). Each move is one compare-and-set, so a capture and a void racing on one
 * authorization end with exactly one of them. {@code refunded} only grows, never past the captured amount.
 */
public final class Charge implements Movement {

    /** Where a charge stands; {@code captured} is the money taken (0 unless succeeded). */
    public record State(String status, long captured, String cancellationReason, Instant changedAt) {}

    public final String id;
    public final String reference;
    public final long amount;
    public final String currency;
    public final String declineCode;
    public final boolean refundsFail;
    public final Instant created;
    /** An authorization (captured later, or never); null for a charge captured at once. */
    public final Instant expiresAt;
    /** {@code tok_captureTimeout}: the first answers of its capture and void are held back. */
    public final boolean settleAnswersLost;
    /** The JSON of a charge captured at once, which never changes; null for an authorization. */
    public final byte[] json;

    private final AtomicReference<State> state;
    private final AtomicLong refunded = new AtomicLong();

    public Charge(
            String id,
            String reference,
            long amount,
            String currency,
            String status,
            String declineCode,
            boolean refundsFail,
            Instant created,
            Instant expiresAt,
            boolean settleAnswersLost,
            byte[] json) {
        this.id = id;
        this.reference = reference;
        this.amount = amount;
        this.currency = currency;
        this.declineCode = declineCode;
        this.refundsFail = refundsFail;
        this.created = created;
        this.expiresAt = expiresAt;
        this.settleAnswersLost = settleAnswersLost;
        this.json = json;
        this.state = new AtomicReference<>(new State(status, "succeeded".equals(status) ? amount : 0, null, created));
    }

    public boolean authorization() {
        return expiresAt != null;
    }

    /** The state now: an authorization past {@code expiresAt} turns canceled ({@code expired}) as it is read. */
    public State state(Instant now) {
        State current = state.get();
        if ("authorized".equals(current.status()) && !now.isBefore(expiresAt)) {
            move(current, new State("canceled", 0, "expired", expiresAt));
            return state.get();
        }
        return current;
    }

    /** True when this call moved the charge from {@code expected}: the one winner of a race. */
    public boolean move(State expected, State next) {
        return state.compareAndSet(expected, next);
    }

    public String status() {
        return state.get().status();
    }

    public boolean succeeded() {
        return "succeeded".equals(status());
    }

    /** What was taken: the amount of a charge, the captured amount of an authorization, 0 when nothing was. */
    public long captured() {
        return state.get().captured();
    }

    /** Atomically reserves {@code value} of the refundable amount; false when it would exceed what was captured. */
    public boolean tryRefund(long value) {
        long limit = captured();
        long before = refunded.getAndUpdate(current -> current + value > limit ? current : current + value);
        return before + value <= limit;
    }

    public long refunded() {
        return refunded.get();
    }

    @Override
    public String pspReference() {
        return id;
    }

    @Override
    public String type() {
        return "CHARGE";
    }

    @Override
    public String reference() {
        return reference;
    }

    @Override
    public long amount() {
        return amount;
    }

    @Override
    public String currency() {
        return currency;
    }

    @Override
    public Instant at() {
        return created;
    }
}
