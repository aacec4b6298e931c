package com.payments.sandbox.rest;

import com.payments.sandbox.Reply;
import com.payments.sandbox.service.FaultSettings;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.core.MediaType;
import java.time.Duration;
import org.jboss.resteasy.reactive.RestResponse;

/** Turns a {@link Reply} into a response, delayed by a non-blocking timer when latency or a timeout applies. */
final class Replies {

    private Replies() {}

    static Uni<RestResponse<byte[]>> respond(Reply reply, FaultSettings faults) {
        RestResponse.ResponseBuilder<byte[]> builder = RestResponse.ResponseBuilder.<byte[]>create(reply.status())
                .entity(reply.body())
                .type(MediaType.APPLICATION_JSON_TYPE);
        if (reply.replayed()) {
            builder.header("Idempotent-Replayed", "true");
        }
        Uni<RestResponse<byte[]>> uni = Uni.createFrom().item(builder.build());
        long delay = reply.delayMs() + faults.latencyMs();
        return delay > 0 ? uni.onItem().delayIt().by(Duration.ofMillis(delay)) : uni;
    }
}
