package com.payments.sandbox;

import java.time.Instant;

/** A refund as the sandbox keeps it; {@code currency} is the charge's. */
public record Refund(
        String id, String reference, String chargeId, long amount, String currency, String status, Instant created)
        implements Movement {

    public boolean succeeded() {
        return "succeeded".equals(status);
    }

    @Override
    public String pspReference() {
        return id;
    }

    @Override
    public String type() {
        return "REFUND";
    }

    @Override
    public Instant at() {
        return created;
    }
}
