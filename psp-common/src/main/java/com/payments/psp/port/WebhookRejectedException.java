package com.payments.psp.port;

/** A webhook that must not be trusted (bad or stale signature, not an event): answer 400 and change nothing. */
public class WebhookRejectedException extends RuntimeException {

    /** Why, for the answer's problem code. */
    public enum Reason {
        /** The signature header is missing or unreadable, or no signature matches one of our secrets. */
        SIGNATURE,
        /** A valid signature whose timestamp is outside the tolerance of our clock (a replay, or a skewed clock). */
        STALE,
        /** Signed, but the body is not an event of the PSP. */
        NOT_AN_EVENT
    }

    private final Reason reason;

    public WebhookRejectedException(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
