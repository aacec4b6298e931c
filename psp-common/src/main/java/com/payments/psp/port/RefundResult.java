package com.payments.psp.port;

/**
 * What a refund came to.
 *
 * @param pspRefundId the PSP's id ({@code re_…}); null when unknown
 * @param failureCode why it failed or was refused (Stripe's {@code failure_reason} or error {@code code})
 * @param detail for UNKNOWN, what made it unknown
 * @param needsAttention true when an operator must look (see {@link ChargeResult#needsAttention()})
 */
public record RefundResult(
        Status status, String pspRefundId, String failureCode, String detail, boolean needsAttention) {

    public enum Status {
        /** The money went back. */
        SUCCEEDED,
        /** Accepted, not final yet: a webhook or a later lookup tells the end. */
        PENDING,
        /** Refused, failed or canceled: no money moved (or it came back); the reservation is released once. */
        FAILED,
        /** Not known yet; never treat as failed. */
        UNKNOWN,
        /** The PSP has no refund for it (lookups only). */
        NOT_FOUND
    }

    public static RefundResult of(Status status, String pspRefundId, String failureCode) {
        return new RefundResult(status, pspRefundId, failureCode, null, false);
    }

    public static RefundResult unknown(String pspRefundId, String detail) {
        return new RefundResult(Status.UNKNOWN, pspRefundId, null, detail, false);
    }

    public static RefundResult attention(String pspRefundId, String detail) {
        return new RefundResult(Status.UNKNOWN, pspRefundId, null, detail, true);
    }
}
