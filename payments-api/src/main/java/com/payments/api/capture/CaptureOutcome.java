package com.payments.api.capture;

import com.payments.api.Payment;
import com.payments.api.idempotency.StoredAnswer;

/** What a capture request gets: its payment, or, for a key already completed, the answer stored for the key. */
public sealed interface CaptureOutcome {
    /** The payment as this request's capture left it: CAPTURED, FAILED, or UNKNOWN when the PSP's answer was lost. */
    record Charged(Payment payment) implements CaptureOutcome {}

    /** A key already completed: its stored answer, or the payment's current state if it was stored before an outcome. */
    record Replayed(StoredAnswer answer) implements CaptureOutcome {}

    /**
     * This request's PSP call, whose outcome another writer (the webhook, the resolver, another instance or release)
     * recorded first, completing the key: the answer it stored, byte for byte, as every replay of the key answers.
     */
    record Answered(StoredAnswer answer) implements CaptureOutcome {}
}
