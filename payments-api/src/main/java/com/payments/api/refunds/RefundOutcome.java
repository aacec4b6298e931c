package com.payments.api.refunds;

import com.payments.api.RefundAccepted;
import com.payments.api.idempotency.StoredAnswer;

/** What a refund request gets: the reservation it made, or, for a key already used for it, the stored answer. */
public sealed interface RefundOutcome {
    /** Reserved by this request: the refund is PENDING until refunds-worker settles it. */
    record Reserved(RefundAccepted refund) implements RefundOutcome {}

    /** The key was completed by an earlier request: its stored answer, byte for byte. */
    record Replayed(StoredAnswer answer) implements RefundOutcome {}
}
