package com.payments.api.idempotency;

import com.payments.api.Payment;
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

    /**
     * The answer for a payment in its current state, to the request whose key is (or was) in progress on it: an
     * automatic capture 201 CAPTURED, 402 FAILED; a manual payment's authorization 201 AUTHORIZED (402 FAILED), its
     * capture 200 CAPTURED, its cancel 200 CANCELED; 202 while the PSP's outcome is pending or unknown.
     */
    public StoredAnswer payment(Payment p) {
        return new StoredAnswer(status(p), json.bytes(PaymentView.of(p, List.of())));
    }

    /** The refund reservation's answer: 202 with the PENDING refund. */
    public StoredAnswer refundAccepted(RefundAccepted accepted) {
        return new StoredAnswer(202, json.bytes(accepted));
    }

    /**
     * True for a payment's answer stored before its outcome was known (202: UNKNOWN, PROCESSING or a manual PSP call
     * pending): a replay answers the payment's current state instead (docs/architecture.md §4).
     */
    public static boolean beforeOutcome(StoredAnswer paymentAnswer) {
        return paymentAnswer.status() == 202;
    }

    private static int status(Payment p) {
        return switch (p.status()) {
            case CAPTURED -> p.manual() ? 200 : 201;
            case AUTHORIZED -> 201;
            case FAILED -> 402;
            case CANCELED, EXPIRED -> 200;
            case UNKNOWN, PROCESSING, AUTHORIZING, CAPTURING, CANCELING, EXPIRING -> 202;
        };
    }
}
