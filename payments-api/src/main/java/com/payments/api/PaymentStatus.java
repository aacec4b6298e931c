package com.payments.api;

import java.util.EnumSet;
import java.util.Set;

/**
 * Payment states. The state machine itself lives in SQL (trigger {@code payments_guard_transition}, V1 and V98;
 * docs/operations.md "Payment states"): automatic PROCESSING → CAPTURED/FAILED/UNKNOWN, UNKNOWN → CAPTURED/FAILED;
 * manual AUTHORIZING → AUTHORIZED/FAILED, AUTHORIZED → CAPTURING/CANCELING/EXPIRING, CAPTURING → CAPTURED (or back to
 * AUTHORIZED, or EXPIRED), CANCELING → CANCELED (or back to AUTHORIZED), EXPIRING → EXPIRED (or back to AUTHORIZED).
 */
public enum PaymentStatus {
    PROCESSING,
    CAPTURED,
    FAILED,
    UNKNOWN,
    AUTHORIZING,
    AUTHORIZED,
    CAPTURING,
    CANCELING,
    CANCELED,
    EXPIRING,
    EXPIRED;

    /** The states a payment may move to {@code target} from: the table of the SQL trigger, as it is. */
    public Set<PaymentStatus> allowedSources() {
        return switch (this) {
            case CAPTURED -> EnumSet.of(PROCESSING, UNKNOWN, CAPTURING);
            case FAILED -> EnumSet.of(PROCESSING, UNKNOWN, AUTHORIZING);
            case UNKNOWN -> EnumSet.of(PROCESSING);
            case AUTHORIZED -> EnumSet.of(AUTHORIZING, CAPTURING, CANCELING, EXPIRING);
            case CAPTURING, CANCELING, EXPIRING -> EnumSet.of(AUTHORIZED);
            case CANCELED -> EnumSet.of(CANCELING);
            case EXPIRED -> EnumSet.of(CAPTURING, EXPIRING);
            case PROCESSING, AUTHORIZING -> EnumSet.noneOf(PaymentStatus.class);
        };
    }

    public boolean canMoveTo(PaymentStatus target) {
        return target.allowedSources().contains(this);
    }

    /** No PSP outcome pending: nothing for the resolver to settle. */
    public boolean isFinal() {
        return switch (this) {
            case CAPTURED, FAILED, AUTHORIZED, CANCELED, EXPIRED -> true;
            default -> false;
        };
    }
}
