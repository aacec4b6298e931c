package com.payments.api;

import java.util.EnumSet;
import java.util.Set;

/**
 * Payment states and the one transition table of the state machine. The same rule lives in SQL (trigger
 * {@code payments_guard_transition} of V1): PROCESSING → CAPTURED/FAILED/UNKNOWN, UNKNOWN → CAPTURED/FAILED. V98 adds
 * the states of manual capture (AUTHORIZING, AUTHORIZED, CAPTURING, CANCELING, CANCELED, EXPIRING, EXPIRED;
 * docs/operations.md "Payment states"), which no service writes yet.
 */
public enum PaymentStatus {
    PROCESSING,
    CAPTURED,
    FAILED,
    UNKNOWN;

    /** The states a payment may move to {@code target} from. */
    public Set<PaymentStatus> allowedSources() {
        return switch (this) {
            case CAPTURED, FAILED -> EnumSet.of(PROCESSING, UNKNOWN);
            case UNKNOWN -> EnumSet.of(PROCESSING);
            case PROCESSING -> EnumSet.noneOf(PaymentStatus.class);
        };
    }

    public boolean canMoveTo(PaymentStatus target) {
        return target.allowedSources().contains(this);
    }

    public boolean isFinal() {
        return this == CAPTURED || this == FAILED;
    }
}
