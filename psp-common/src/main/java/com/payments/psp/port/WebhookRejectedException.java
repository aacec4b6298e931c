package com.payments.psp.port;

/** A webhook that must not be trusted (bad or stale signature, not an event): answer 400 and change nothing. */
public class WebhookRejectedException extends RuntimeException {
    public WebhookRejectedException(String reason) {
        super(reason, null, false, false);
    }
}
