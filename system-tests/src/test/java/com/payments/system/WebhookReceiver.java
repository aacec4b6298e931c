package com.payments.system;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A merchant's webhook receiver on loopback, in memory: it keeps every request (method, path, headers, raw body) and
 * verifies its Standard Webhooks signature as docs/merchant-webhooks.md tells merchants to: HMAC-SHA256 of
 * {@code webhook-id.webhook-timestamp.body} keyed with the base64-decoded part of the secret after {@code whsec_},
 * compared with each {@code v1,} entry of {@code webhook-signature}, and the timestamp within 5 minutes. A verified
 * request is answered 204, any other 401 (webhook-delivery retries it).
 */
final class WebhookReceiver implements AutoCloseable {
    private static final Duration TOLERANCE = Duration.ofMinutes(5);

    /** One request as it arrived; header names in lower case, each header's first value. */
    record Received(
            String method,
            String path,
            Map<String, String> headers,
            byte[] body,
            Instant receivedAt,
            boolean signatureValid) {

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return method + " " + path + " webhook-id=" + header("webhook-id") + " valid=" + signatureValid + " "
                    + bodyText();
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(4);
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private volatile byte[] key;

    private WebhookReceiver(HttpServer server) {
        this.server = server;
    }

    /** Listens on 127.0.0.1, on a free port. */
    static WebhookReceiver start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            WebhookReceiver receiver = new WebhookReceiver(server);
            server.createContext("/", receiver::handle);
            server.setExecutor(receiver.executor);
            server.start();
            return receiver;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The URL to register: plain http on loopback (payments.webhooks.allow-http and allow-loopback). */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks";
    }

    /** The endpoint's signing secret ({@code whsec_} + base64), as the registration answered it. */
    void secret(String secret) {
        key = key(secret);
    }

    /** The HMAC key of a secret: the base64-decoded part after {@code whsec_}. */
    static byte[] key(String secret) {
        if (!secret.startsWith("whsec_")) {
            throw new IllegalArgumentException("a webhook secret starts with whsec_");
        }
        return Base64.getDecoder().decode(secret.substring("whsec_".length()));
    }

    /** Every request so far, in the order they arrived. */
    List<Received> received() {
        return List.copyOf(received);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange;
                InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readAllBytes();
            Map<String, String> headers = new TreeMap<>();
            exchange.getRequestHeaders()
                    .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
            Instant now = Instant.now();
            boolean valid = verify(
                    key,
                    headers.get("webhook-id"),
                    headers.get("webhook-timestamp"),
                    headers.get("webhook-signature"),
                    body,
                    now);
            received.add(new Received(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    Map.copyOf(headers),
                    body,
                    now,
                    valid));
            exchange.sendResponseHeaders(valid ? 204 : 401, -1);
        }
    }

    /** True when the timestamp is within 5 minutes of {@code now} and one v1 entry is the body's signature. */
    static boolean verify(byte[] secretKey, String id, String timestamp, String signatures, byte[] body, Instant now) {
        if (secretKey == null
                || id == null
                || timestamp == null
                || signatures == null
                || !timestamp.matches("[0-9]{1,12}")) {
            return false;
        }
        Instant signedAt = Instant.ofEpochSecond(Long.parseLong(timestamp));
        if (Duration.between(signedAt, now).abs().compareTo(TOLERANCE) > 0) {
            return false;
        }
        byte[] expected;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secretKey, "HmacSHA256"));
            mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
            expected = mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        for (String entry : signatures.split(" ")) {
            if (!entry.startsWith("v1,")) {
                continue;
            }
            try {
                if (MessageDigest.isEqual(expected, Base64.getDecoder().decode(entry.substring(3)))) {
                    return true;
                }
            } catch (IllegalArgumentException notBase64) {
                // another entry may match
            }
        }
        return false;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
