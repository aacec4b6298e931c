package com.payments.psp.port;

import java.time.Instant;

/**
 * A lookup of a refund we sent.
 *
 * @param original the refund exactly as first sent
 * @param pspRefundId the PSP's id if we ever learnt it, else null
 * @param firstSentAt when it was first sent
 */
public record RefundQuery(RefundRequest original, String pspRefundId, Instant firstSentAt) {}
