package com.payments.sandbox;

import java.time.Instant;

/** A money movement: one line of a settlement file. */
public interface Movement {
    String pspReference();

    /** CHARGE, REFUND, CHARGEBACK or FEE. */
    String type();

    String reference();

    long amount();

    String currency();

    Instant at();
}
