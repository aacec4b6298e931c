package com.payments.sandbox;

/**
 * What the sandbox saw for one reference (a payment id for charges, a refund id for refunds): requests
 * received (replays, injected errors and timeouts included; requests rejected as invalid excluded) and
 * money movements made (succeeded charges and refunds; declines and failed refunds move no money).
 */
public record Counters(
        String reference, int chargeRequests, int chargeMovements, int refundRequests, int refundMovements) {}
