package com.payments.sandbox.service;

import com.payments.sandbox.Faults;
import com.payments.sandbox.config.SandboxConfig;
import io.quarkus.logging.Log;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.ext.web.client.WebClient;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed webhooks, sent with the Vert.x web client (never blocking): {@code Psp-Signature: t=<unix
 * seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>}, re-signed at every attempt with the real
 * time. A delivery is retried with exponential backoff while the receiver answers anything but 2xx or
 * does not answer; the drop, duplicate and reorder knobs apply per event.
 */
@ApplicationScoped
public class WebhookService {

    /** How the deliveries of one protocol are signed: the header's name and its value for a time and a body. */
    public record Signer(String header, Signature value) {
        public interface Signature {
            String of(long unixSeconds, byte[] body);
        }
    }

    /** Where a delivery stands: PENDING, RETRYING, DELIVERED, GAVE_UP or DROPPED. */
    public record Delivery(
            String eventId, String type, String reference, int copy, String status, int attempts, int lastStatusCode) {}

    private static final class Tracker {
        final String url;
        final Signer signer;
        final String eventId;
        final String type;
        final String reference;
        final int copy;
        final long sequence;
        final AtomicInteger attempts = new AtomicInteger();
        volatile String status = "PENDING";
        volatile int lastStatusCode;

        Tracker(String url, Signer signer, String eventId, String type, String reference, int copy, long sequence) {
            this.url = url;
            this.signer = signer;
            this.eventId = eventId;
            this.type = type;
            this.reference = reference;
            this.copy = copy;
            this.sequence = sequence;
        }

        Delivery view() {
            return new Delivery(eventId, type, reference, copy, status, attempts.get(), lastStatusCode);
        }
    }

    private final Vertx vertx;
    private final FaultSettings faults;
    private final String url;
    private final SecretKeySpec key;
    private final long reorderDelayMs;
    private final int maxAttempts;
    private final long initialBackoffMs;
    private final long maxBackoffMs;
    private final long requestTimeoutMs;
    private final ConcurrentHashMap<String, Tracker> log = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong sequence = new java.util.concurrent.atomic.AtomicLong();
    private final ThreadLocal<Mac> macs;
    private volatile WebClient client;
    private final Signer pspSignature = new Signer("Psp-Signature", this::signatureHeader);

    public WebhookService(Vertx vertx, FaultSettings faults, SandboxConfig config) {
        this.vertx = vertx;
        this.faults = faults;
        this.url = config.webhook().url().filter(u -> !u.isBlank()).orElse(null);
        this.key = new SecretKeySpec(config.webhook().secret().getBytes(StandardCharsets.UTF_8), "HmacSHA256");
        this.reorderDelayMs = config.webhook().reorderDelay().toMillis();
        this.maxAttempts = Math.max(1, config.webhook().maxAttempts());
        this.initialBackoffMs = Math.max(1, config.webhook().initialBackoff().toMillis());
        this.maxBackoffMs = config.webhook().maxBackoff().toMillis();
        this.requestTimeoutMs = config.webhook().requestTimeout().toMillis();
        this.macs = ThreadLocal.withInitial(() -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(key);
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        });
        if (url == null) {
            Log.info("psp.webhook.url is not set: no webhooks will be sent");
        } else {
            Log.infof("Webhooks go to %s", url);
        }
    }

    public boolean enabled() {
        return url != null;
    }

    /** Sends {@code {"id":"evt_…","type":type,"data":data}} (unless the drop knob says otherwise). */
    public void publish(String type, String reference, byte[] data) {
        if (url == null) {
            return;
        }
        String eventId = PspService.newId("evt_");
        byte[] head =
                ("{\"id\":\"" + eventId + "\",\"type\":\"" + type + "\",\"data\":").getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[head.length + data.length + 1];
        System.arraycopy(head, 0, body, 0, head.length);
        System.arraycopy(data, 0, body, head.length, data.length);
        body[body.length - 1] = '}';
        deliver(url, pspSignature, eventId, type, reference, body);
    }

    /**
     * Delivers {@code body} to {@code target}, signed by {@code signer} at every attempt, with the same retries and
     * drop, duplicate and reorder knobs as the sandbox protocol's events (the Stripe mode sends its events this way).
     */
    public void deliver(String target, Signer signer, String eventId, String type, String reference, byte[] body) {
        Faults f = faults.current();
        if (FaultSettings.roll(f.webhookDropRate())) {
            Tracker dropped = track(target, signer, eventId, type, reference, 1);
            dropped.status = "DROPPED";
            return;
        }
        int copies = FaultSettings.roll(f.webhookDuplicateRate()) ? 2 : 1;
        long delay = FaultSettings.roll(f.webhookReorderRate()) ? reorderDelayMs : 0;
        for (int copy = 1; copy <= copies; copy++) {
            Tracker tracker = track(target, signer, eventId, type, reference, copy);
            schedule(tracker, body, 1, delay);
        }
    }

    private Tracker track(String target, Signer signer, String eventId, String type, String reference, int copy) {
        Tracker tracker = new Tracker(target, signer, eventId, type, reference, copy, sequence.incrementAndGet());
        log.put(eventId + '#' + copy, tracker);
        return tracker;
    }

    private void schedule(Tracker tracker, byte[] body, int attempt, long delayMs) {
        if (delayMs > 0) {
            vertx.setTimer(delayMs, id -> attempt(tracker, body, attempt));
        } else {
            attempt(tracker, body, attempt);
        }
    }

    private void attempt(Tracker tracker, byte[] body, int attempt) {
        tracker.attempts.incrementAndGet();
        client().requestAbs(HttpMethod.POST, tracker.url)
                .putHeader("Content-Type", "application/json")
                .putHeader(tracker.signer.header(), tracker.signer.value().of(System.currentTimeMillis() / 1000, body))
                .timeout(requestTimeoutMs)
                .sendBuffer(Buffer.buffer(body))
                .subscribe()
                .with(
                        response -> {
                            tracker.lastStatusCode = response.statusCode();
                            if (response.statusCode() >= 200 && response.statusCode() < 300) {
                                tracker.status = "DELIVERED";
                            } else {
                                retry(tracker, body, attempt, "HTTP " + response.statusCode());
                            }
                        },
                        failure -> {
                            tracker.lastStatusCode = 0;
                            retry(tracker, body, attempt, failure.toString());
                        });
    }

    private void retry(Tracker tracker, byte[] body, int attempt, String why) {
        if (attempt >= maxAttempts) {
            tracker.status = "GAVE_UP";
            Log.warnf(
                    "Webhook %s (%s) not delivered after %d attempts: %s", tracker.eventId, tracker.type, attempt, why);
            return;
        }
        tracker.status = "RETRYING";
        long backoff = Math.min(maxBackoffMs, initialBackoffMs << Math.min(attempt - 1, 30));
        Log.debugf("Webhook %s attempt %d failed (%s), next in %d ms", tracker.eventId, attempt, why, backoff);
        schedule(tracker, body, attempt + 1, backoff);
    }

    /** {@code t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>}. */
    public String signatureHeader(long unixSeconds, byte[] body) {
        Mac mac = macs.get();
        mac.reset();
        mac.update((unixSeconds + ".").getBytes(StandardCharsets.US_ASCII));
        byte[] digest = mac.doFinal(body);
        return "t=" + unixSeconds + ",v1=" + HexFormat.of().formatHex(digest);
    }

    /** Deliveries of the events about {@code reference} (all when null), oldest first. */
    public List<Delivery> deliveries(String reference) {
        List<Tracker> trackers = new ArrayList<>();
        for (Tracker t : log.values()) {
            if (reference == null || reference.equals(t.reference)) {
                trackers.add(t);
            }
        }
        trackers.sort(Comparator.comparingLong(t -> t.sequence));
        return trackers.stream().map(Tracker::view).toList();
    }

    public void reset() {
        log.clear();
    }

    private WebClient client() {
        WebClient c = client;
        if (c == null) {
            synchronized (this) {
                c = client;
                if (c == null) {
                    c = WebClient.create(
                            vertx, new WebClientOptions().setMaxPoolSize(32).setKeepAlive(true));
                    client = c;
                }
            }
        }
        return c;
    }

    @PreDestroy
    void close() {
        if (client != null) {
            client.close();
        }
    }
}
