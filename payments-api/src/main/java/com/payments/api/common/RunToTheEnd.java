package com.payments.api.common;

import io.smallrye.mutiny.Uni;

/**
 * Work that must finish even when its caller goes away. Quarkus REST cancels a request's {@link Uni} when the client
 * closes its connection; a capture cancelled between its claim and its recorded outcome would leave the payment
 * PROCESSING for the resolver, and its PSP call would look like a failure to the concurrency limit. Run through
 * {@link #of}, the work is subscribed to once and runs to its end; a caller that cancels only stops listening.
 */
public final class RunToTheEnd {
    private RunToTheEnd() {}

    public static <T> Uni<T> of(Uni<T> work) {
        return Uni.createFrom().emitter(emitter -> work.subscribe().with(emitter::complete, emitter::fail));
    }
}
