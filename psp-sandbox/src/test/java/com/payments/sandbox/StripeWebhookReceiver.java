package com.payments.sandbox;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** Receives the Stripe mode's events (its own Vert.x HTTP server on a free loopback port) and records them. */
public class StripeWebhookReceiver implements QuarkusTestResourceLifecycleManager {

    /** One request as received. */
    public record Received(String signature, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    static final List<Received> RECEIVED = new CopyOnWriteArrayList<>();

    private Vertx vertx;

    @Override
    public Map<String, String> start() {
        vertx = Vertx.vertx();
        try {
            HttpServer server = vertx.createHttpServer()
                    .requestHandler(request -> request.body().onSuccess(buffer -> {
                        RECEIVED.add(new Received(request.getHeader("Stripe-Signature"), buffer.getBytes()));
                        request.response().setStatusCode(200).end();
                    }))
                    .listen(0, "127.0.0.1")
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            return Map.of(
                    "psp.stripe.webhook-url", "http://127.0.0.1:" + server.actualPort() + "/v1/psp/stripe/webhooks");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void stop() {
        if (vertx != null) {
            vertx.close();
        }
    }

    /** The events whose object carries {@code text} (an id or a metadata value), in arrival order. */
    static List<Received> about(String text) {
        return RECEIVED.stream().filter(r -> r.text().contains(text)).toList();
    }
}
