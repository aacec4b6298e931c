package com.payments.psp.port;

import java.time.Instant;

/**
 * A lookup of a charge we sent.
 *
 * @param original the charge exactly as first sent (an adapter may send it again with the same key)
 * @param pspChargeId the PSP's id if we ever learnt it, else null
 * @param firstSentAt when the charge was first sent: decides whether the PSP still keeps its idempotency key
 * @param authorization true when {@code original} went out through {@link PspPort#authorize} (manual capture): an
 *     adapter that re-sends it must re-send an authorization, and the answer may be AUTHORIZED or CANCELED
 */
public record ChargeQuery(ChargeRequest original, String pspChargeId, Instant firstSentAt, boolean authorization) {

    /** A look-up of a charge sent through {@link PspPort#charge} (captured at once). */
    public ChargeQuery(ChargeRequest original, String pspChargeId, Instant firstSentAt) {
        this(original, pspChargeId, firstSentAt, false);
    }
}
