package com.payments.psp.port;

import java.time.Instant;

/**
 * A lookup of a charge we sent.
 *
 * @param original the charge exactly as first sent (an adapter may send it again with the same key)
 * @param pspChargeId the PSP's id if we ever learnt it, else null
 * @param firstSentAt when the charge was first sent: decides whether the PSP still keeps its idempotency key
 */
public record ChargeQuery(ChargeRequest original, String pspChargeId, Instant firstSentAt) {}
