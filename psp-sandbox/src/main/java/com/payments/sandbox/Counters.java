package com.payments.sandbox;

/**
 * What the sandbox saw for one reference (a payment id for charges, authorizations, captures and voids; a refund id for
 * refunds): requests received (replays, injected errors and timeouts included; requests rejected as invalid excluded)
 * and money movements made. {@code chargeRequests} counts charges and authorizations; {@code chargeMovements} counts
 * money taken: succeeded charges and captures (an authorization takes nothing). {@code capturedAmount} is the money
 * those captures took, {@code voidMovements} the authorizations voided.
 */
public record Counters(
        String reference,
        int chargeRequests,
        int chargeMovements,
        int refundRequests,
        int refundMovements,
        int captureRequests,
        long capturedAmount,
        int voidRequests,
        int voidMovements) {}
