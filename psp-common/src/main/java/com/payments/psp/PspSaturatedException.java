package com.payments.psp;

/**
 * The call never reached the PSP: its instance was at its limit of concurrent PSP calls and the call's wait for a
 * permit ran out (or too many calls were already waiting). Nothing was sent, so nothing can have been charged.
 */
public class PspSaturatedException extends RuntimeException {
    public PspSaturatedException(String message) {
        super(message, null, false, false);
    }
}
