package com.payments.api.client;

/** The PSP could not be reached (no connection could be made): the charge was never sent. Counts as a failure. */
public class PspNotSentException extends RuntimeException {
    public PspNotSentException(String message) {
        super(message, null, false, false);
    }
}
