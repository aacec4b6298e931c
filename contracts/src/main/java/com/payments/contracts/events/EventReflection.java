package com.payments.contracts.events;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Native images: the event records are written and read by hand with Jackson (outbox payloads, Kafka values), which
 * no REST signature reveals to Quarkus, so their constructors and accessors are registered here for reflection.
 */
@RegisterForReflection(
        targets = {
            PaymentEvent.class,
            PaymentAuthorized.class,
            PaymentCaptured.class,
            PaymentCanceled.class,
            PaymentExpired.class,
            PaymentFailed.class,
            PaymentDisputed.class,
            RefundRequested.class,
            RefundSucceeded.class,
            RefundFailed.class
        })
final class EventReflection {
    private EventReflection() {}
}
