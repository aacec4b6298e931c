package com.payments.sandbox;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/** A charge as the sandbox keeps it. {@code refunded} only grows, never past {@code amount}. */
public final class Charge implements Movement {
    public final String id;
    public final String reference;
    public final long amount;
    public final String currency;
    public final String status;
    public final String declineCode;
    public final boolean refundsFail;
    public final Instant created;
    public final byte[] json;
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
            byte[] json) {
        this.id = id;
        this.reference = reference;
        this.amount = amount;
        this.currency = currency;
        this.status = status;
        this.declineCode = declineCode;
        this.refundsFail = refundsFail;
        this.created = created;
        this.json = json;
    }

    public boolean succeeded() {
        return "succeeded".equals(status);
    }

    /** Atomically reserves {@code value} of the refundable amount; false when it would exceed the charge. */
    public boolean tryRefund(long value) {
        long before = refunded.getAndUpdate(current -> current + value > amount ? current : current + value);
        return before + value <= amount;
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
