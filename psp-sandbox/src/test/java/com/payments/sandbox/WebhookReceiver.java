package com.payments.sandbox;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tiny webhook receiver (its own Vert.x HTTP server on a free port) that the sandbox posts to. It
 * records every request and answers 500 to the next {@link #failNext} requests, 200 otherwise.
 */
public class WebhookReceiver implements QuarkusTestResourceLifecycleManager {

    /** One request as received. */
    public record Received(String signature, byte[] body, int answeredWith) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    static final List<Received> RECEIVED = new CopyOnWriteArrayList<>();
    static final AtomicInteger failNext = new AtomicInteger();

    private Vertx vertx;

    @Override
    public Map<String, String> start() {
        vertx = Vertx.vertx();
        try {
            HttpServer server = vertx.createHttpServer()
                    .requestHandler(request -> request.body().onSuccess(buffer -> {
                        int status = failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0 ? 500 : 200;
                        RECEIVED.add(new Received(request.getHeader("Psp-Signature"), buffer.getBytes(), status));
                        request.response().setStatusCode(status).end();
                    }))
                    .listen(0, "127.0.0.1")
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            return Map.of("psp.webhook.url", "http://127.0.0.1:" + server.actualPort() + "/v1/psp/webhooks");
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

    static List<Received> about(String reference) {
        return RECEIVED.stream()
                .filter(r -> r.text().contains("\"reference\":\"" + reference + "\""))
                .toList();
    }
}
