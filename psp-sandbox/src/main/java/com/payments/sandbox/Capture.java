package com.payments.sandbox;

import java.time.Instant;

/** The capture of an authorization: a CHARGE line of the captured amount, booked when captured. */
public record Capture(String pspReference, String reference, long amount, String currency, Instant at)
        implements Movement {

    @Override
    public String type() {
        return "CHARGE";
    }
}
