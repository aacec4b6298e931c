package com.payments.api.client;

/**
 * The adapter's verdict {@link com.payments.psp.port.ChargeResult.Status#NOT_SENT}: the first connect of the call's
 * first attempt failed, so the charge was never sent. Counts as a failure.
 */
public class PspNotSentException extends RuntimeException {
    public PspNotSentException(String message) {
        super(message, null, false, false);
    }
}
