package com.payments.psp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.ext.web.client.WebClient;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/** What the PSP adapters share of HTTP and JSON: the non-blocking client, URLs and the reading of answers. */
public final class PspHttp {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private PspHttp() {}

    /**
     * How long a kept-alive connection may stay idle before this side closes it: shorter than the servers' own idle
     * timeouts (the JDK's HttpServer 30 s, load balancers 60 s and more). Otherwise the server closes idle connections
     * as the next burst reuses them: in the 300 ms benchmark (docs/benchmarks.md, 2026-12-05) a round that began
     * about 30 s after the warm-up lost some 340 charges to connections closed under them (UNKNOWN, left to the
     * resolver), and their failures opened the circuit breaker and cut the PSP limit to its floor.
     */
    static final Duration IDLE_CLOSE = Duration.ofSeconds(20);

    /**
     * The Vert.x web client of an adapter: HTTP/1.1 keep-alive, one connection per call in flight, idle connections
     * closed after {@link #IDLE_CLOSE}.
     *
     * @param maxConnections at least the ceiling of the service's PSP limit, so a call holding a permit never waits
     * @param connectTimeout null for the client's default
     */
    public static WebClient client(Vertx vertx, int maxConnections, Duration connectTimeout) {
        return client(vertx, maxConnections, connectTimeout, IDLE_CLOSE);
    }

    static WebClient client(Vertx vertx, int maxConnections, Duration connectTimeout, Duration idleClose) {
        WebClientOptions options = new WebClientOptions()
                .setMaxPoolSize(maxConnections)
                .setKeepAlive(true)
                .setKeepAliveTimeout((int) idleClose.toSeconds())
                .setUserAgent("payments-platform");
        if (connectTimeout != null) {
            options.setConnectTimeout((int) connectTimeout.toMillis());
        }
        return WebClient.create(vertx, options);
    }

    /**
     * The attempts of one PSP call: each subscription of the returned {@code Uni} (a retry or resend re-subscribes it)
     * is one attempt of {@code attempt}. The "not sent" verdict is carried by this chain, not read from the last error:
     * only when the first attempt of the call cannot connect does it fail with {@link NeverSentException}; once an
     * attempt has been made, every later one may follow a request the PSP received and executed, and its connect
     * failure stays an ordinary failure (the call's outcome is unknown).
     */
    public static <T> Uni<T> attempts(Supplier<Uni<T>> attempt) {
        AtomicBoolean attempted = new AtomicBoolean();
        return Uni.createFrom().deferred(() -> {
            Uni<T> sent = attempt.get();
            return attempted.getAndSet(true)
                    ? sent
                    : sent.onFailure(PspHttp::connectFailed).transform(NeverSentException::new);
        });
    }

    /** No connection could be made (refused, unreachable, connect timeout): nothing was written on it. */
    public static boolean connectFailed(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConnectException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** The base URL without a trailing slash, for {@code base + "/v1/…"}. */
    public static String base(URI url) {
        String text = url.toString();
        return text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
    }

    /** An answer's JSON body: a missing node when empty, {@code unreadable} when it is not JSON. */
    public static JsonNode json(Buffer body, JsonNode unreadable) {
        if (body == null || body.length() == 0) {
            return MAPPER.missingNode();
        }
        try {
            return MAPPER.readTree(body.getBytes());
        } catch (IOException e) {
            return unreadable;
        }
    }

    /** A field's text, null when missing or JSON null. */
    public static String text(JsonNode node) {
        return node == null || node.isMissingNode() || node.isNull() ? null : node.asText();
    }

    /** URL-encoded (form and query values). */
    public static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
