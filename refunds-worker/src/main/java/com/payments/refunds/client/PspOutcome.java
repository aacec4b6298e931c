package com.payments.refunds.client;

/**
 * A definite answer of the PSP about a refund. An unknown outcome (timeout, connection error, 5xx, circuit open) is
 * not one of these: it is a failed {@code Uni}.
 */
public sealed interface PspOutcome {

    /** The PSP refunded the money. */
    record Succeeded(String pspReference) implements PspOutcome {}

    /** The PSP refused the refund and moved no money (a decline). */
    record Failed(String failureCode) implements PspOutcome {}

    /** The PSP accepted the refund but has not finished it (Stripe's {@code pending}): the sync asks again later. */
    record Pending(String pspReference) implements PspOutcome {}

    /** A lookup found no refund with this reference: the PSP never executed it. */
    record NotFound() implements PspOutcome {}

    /**
     * The PSP rejected the request itself (400, unknown charge, key reused with another body): not a decline and
     * nothing a retry will change; a human has to look. {@code detail}: what the PSP said ({@code HTTP 404
     * charge_not_found}).
     */
    record Rejected(String detail) implements PspOutcome {}
}
