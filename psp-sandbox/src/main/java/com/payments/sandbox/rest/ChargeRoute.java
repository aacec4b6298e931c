package com.payments.sandbox.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.sandbox.ChargeRequest;
import com.payments.sandbox.Reply;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.PspService;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;

/**
 * {@code POST /v1/charges}, the hot path of every benchmark, as a plain Vert.x route on the event loop:
 * no request context, no content negotiation, the body parsed once by Jackson. Same semantics as the
 * other {@code /v1} calls in {@link PspResource}; delays use Vert.x timers, never a blocked thread.
 */
@ApplicationScoped
public class ChargeRoute {

    private final PspService psp;
    private final FaultSettings faults;
    private final ObjectMapper mapper;
    private final Vertx vertx;

    public ChargeRoute(PspService psp, FaultSettings faults, ObjectMapper mapper, Vertx vertx) {
        this.psp = psp;
        this.faults = faults;
        this.mapper = mapper;
        this.vertx = vertx;
    }

    void register(@Observes Router router) {
        router.post("/v1/charges")
                .order(-100)
                .handler(BodyHandler.create(false).setBodyLimit(65_536))
                .handler(ctx -> {
                    HttpServerRequest request = ctx.request();
                    Buffer body = ctx.body().buffer();
                    Reply reply = psp.charge(request.getHeader("Idempotency-Key"), parse(body));
                    long delay = reply.delayMs() + faults.latencyMs();
                    if (delay > 0) {
                        vertx.setTimer(delay, id -> send(request, reply));
                    } else {
                        send(request, reply);
                    }
                });
    }

    private ChargeRequest parse(Buffer body) {
        if (body == null || body.length() == 0) {
            return null;
        }
        try {
            return mapper.readValue(body.getBytes(), ChargeRequest.class);
        } catch (IOException e) {
            return null;
        }
    }

    private static void send(HttpServerRequest request, Reply reply) {
        var response = request.response();
        if (response.closed() || response.ended()) {
            return;
        }
        response.setStatusCode(reply.status()).putHeader("Content-Type", "application/json");
        if (reply.replayed()) {
            response.putHeader("Idempotent-Replayed", "true");
        }
        response.end(Buffer.buffer(reply.body()));
    }
}
