package com.payments.api.idempotency;

import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.PaymentView;
import com.payments.api.RefundAccepted;
import com.payments.api.common.Json;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * The answers stored for idempotency keys: what a key replays, and what the first request gets (the same bytes).
 * The one place that decides their status codes (docs/architecture.md §4).
 */
@ApplicationScoped
public class StoredAnswers {
    private final Json json;

    public StoredAnswers(Json json) {
        this.json = json;
    }

    /** The capture answer for a payment in its current state: 201 CAPTURED, 402 FAILED, 202 otherwise. */
    public StoredAnswer payment(Payment p) {
        return new StoredAnswer(captureStatus(p.status()), json.bytes(PaymentView.of(p, List.of())));
    }

    /** The refund reservation's answer: 202 with the PENDING refund. */
    public StoredAnswer refundAccepted(RefundAccepted accepted) {
        return new StoredAnswer(202, json.bytes(accepted));
    }

    /**
     * True for a payment's answer stored before its outcome was known (UNKNOWN or PROCESSING): a replay answers the
     * payment's current state instead (docs/architecture.md §4).
     */
    public static boolean beforeOutcome(StoredAnswer paymentAnswer) {
        return paymentAnswer.status() == captureStatus(PaymentStatus.UNKNOWN);
    }

    private static int captureStatus(PaymentStatus status) {
        return switch (status) {
            case CAPTURED -> 201;
            case FAILED -> 402;
            case UNKNOWN, PROCESSING -> 202;
        };
    }
}
