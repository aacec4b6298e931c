package com.payments.api.client;

/** The PSP answered with a 5xx or an unusable answer: the outcome of the call is unknown. Counts as a failure. */
public class PspUnavailableException extends RuntimeException {
    public PspUnavailableException(String message) {
        super(message, null, false, false);
    }
}
