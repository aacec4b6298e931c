package com.payments.refunds.client;

/** The PSP answered 5xx, 408 or 429, or something outside the protocol: the outcome is unknown. */
public class PspUnavailableException extends RuntimeException {
    public PspUnavailableException(String message) {
        super(message);
    }
}
