package com.payments.delivery;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.PfxOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * A merchant's webhook receiver for tests: an HTTP server on loopback that records every request and answers the
 * n-th one (0-based) with {@code status.apply(n)} after {@code delay}.
 */
final class Receiver implements AutoCloseable {
    /** @param serverName the TLS SNI name the client sent (null over plain http) */
    record Received(MultiMap headers, String body, long atNanos, String serverName) {}

    private static final Vertx VERTX = Vertx.vertx();

    private final HttpServer server;
    private final Queue<Received> received = new ConcurrentLinkedQueue<>();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger maxOpen = new AtomicInteger();

    private Receiver(IntFunction<Integer> status, Duration delay, String location) {
        this(status, request -> delay, location);
    }

    private Receiver(IntFunction<Integer> status, Function<HttpServerRequest, Duration> delay, String location) {
        this(new HttpServerOptions(), status, delay, location);
    }

    private Receiver(
            HttpServerOptions options,
            IntFunction<Integer> status,
            Function<HttpServerRequest, Duration> delay,
            String location) {
        server = VERTX.createHttpServer(options)
                .requestHandler(request -> handle(request, status, delay.apply(request), location));
        try {
            server.listen(0, "127.0.0.1")
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static Receiver answering(IntFunction<Integer> status) {
        return new Receiver(status, Duration.ZERO, null);
    }

    static Receiver slow(Duration delay) {
        return new Receiver(n -> 200, delay, null);
    }

    /** Answers 200, after {@code delay} for requests to {@code slowPath} and at once for any other path. */
    static Receiver slowOn(String slowPath, Duration delay) {
        return new Receiver(n -> 200, request -> slowPath.equals(request.path()) ? delay : Duration.ZERO, null);
    }

    /** Over https with the certificate in the PKCS12 key store, answering 200. */
    static Receiver tls(Path keyStore, String password) {
        return new Receiver(
                new HttpServerOptions()
                        .setSsl(true)
                        .setSni(true)
                        .setKeyCertOptions(
                                new PfxOptions().setPath(keyStore.toString()).setPassword(password)),
                n -> 200,
                request -> Duration.ZERO,
                null);
    }

    static Receiver redirectingTo(String location) {
        return new Receiver(n -> 302, Duration.ZERO, location);
    }

    private void handle(HttpServerRequest request, IntFunction<Integer> status, Duration delay, String location) {
        int n = requests.getAndIncrement();
        maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
        request.body().onSuccess(body -> {
            received.add(new Received(
                    request.headers(),
                    body.toString(),
                    System.nanoTime(),
                    request.connection().indicatedServerName()));
            Runnable answer = () -> {
                open.decrementAndGet();
                var response = request.response().setStatusCode(status.apply(n));
                if (location != null) {
                    response.putHeader("location", location);
                }
                response.end();
            };
            if (delay.isZero()) {
                answer.run();
            } else {
                VERTX.setTimer(delay.toMillis(), id -> answer.run());
            }
        });
    }

    String url() {
        return url("/hooks") + "?src=test";
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.actualPort() + path;
    }

    int port() {
        return server.actualPort();
    }

    List<Received> received() {
        return List.copyOf(received);
    }

    int requests() {
        return requests.get();
    }

    /** The most requests this receiver had open at once. */
    int maxOpen() {
        return maxOpen.get();
    }

    @Override
    public void close() {
        server.close();
    }
}
