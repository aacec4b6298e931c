package com.payments.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.MerchantEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * Fans every {@code payment-events} record out into one PENDING delivery per subscribed endpoint. The record is
 * acknowledged once its deliveries are written (a polled batch at a time), and the throttled commit strategy commits an offset only once every
 * record before it is acknowledged: a record is never skipped, and one read again (crash, rebalance) adds nothing.
 * {@link #stop} (the service's graceful stop) takes no batch more.
 */
@ApplicationScoped
public class FanOutConsumer {
    /** The event types a merchant can subscribe to (docs/api.md "Webhook endpoints"). */
    public static final Set<String> TYPES = MerchantEvent.TYPES;

    /** How long a record's insert is retried before the consumer fails (below the throttled strategy's 60 s). */
    static final Duration RETRY_WITHIN = Duration.ofSeconds(45);

    private final DeliveryRepository repository;
    private final ObjectMapper mapper;
    private final AtomicInteger writing = new AtomicInteger();
    /** Set by {@link #stop}; completes once no batch is being written. */
    private volatile CompletableFuture<Void> drained;

    public FanOutConsumer(DeliveryRepository repository, ObjectMapper mapper) {
        this.repository = repository;
        this.mapper = mapper;
    }

    /** One batch of records as polled (batch mode): their deliveries are written in one statement. */
    @Incoming("payment-events")
    public Uni<Void> consume(List<String> values) {
        return Uni.createFrom().deferred(() -> {
            writing.incrementAndGet();
            if (drained != null) {
                ended();
                // never acknowledged, so its offsets are not committed: the next consumer of the group reads it
                return Uni.createFrom().nothing();
            }
            return write(values).eventually(this::ended);
        });
    }

    /**
     * Takes no batch more (a later one is never acknowledged, and the connector hands out the next only after it);
     * completes once the batch being written, if any, is written and acknowledged.
     */
    CompletionStage<Void> stop() {
        synchronized (this) {
            if (drained == null) {
                drained = new CompletableFuture<>();
            }
        }
        if (writing.get() == 0) {
            drained.complete(null);
        }
        return drained;
    }

    private void ended() {
        CompletableFuture<Void> stopped = drained;
        if (writing.decrementAndGet() == 0 && stopped != null) {
            stopped.complete(null);
        }
    }

    private Uni<Void> write(List<String> values) {
        List<DeliveryRepository.Event> events = new ArrayList<>(values.size());
        for (String value : values) {
            DeliveryRepository.Event event = parse(value);
            if (event != null) {
                events.add(event);
            }
        }
        if (events.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return repository
                .fanOut(events)
                .onFailure()
                .retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(5))
                .expireIn(RETRY_WITHIN.toMillis())
                .invoke(added -> Log.debugf("%d events: %d deliveries", events.size(), added))
                .replaceWithVoid();
    }

    /** The event a record carries; null for one that has no webhook (logged when it is not JSON). */
    private DeliveryRepository.Event parse(String value) {
        JsonNode event;
        try {
            event = value == null ? null : mapper.readTree(value);
        } catch (Exception e) {
            Log.warnf(
                    "payment-events record skipped: not JSON (%s)", e.getClass().getSimpleName());
            return null;
        }
        UUID eventId = event == null ? null : uuid(event.path("eventId"));
        UUID merchantId = event == null ? null : uuid(event.path("merchantId"));
        String type = event == null ? null : event.path("type").asText(null);
        if (eventId == null || merchantId == null || !TYPES.contains(type)) {
            // events without a merchant, or of a type no merchant can subscribe to, have no webhook
            return null;
        }
        return new DeliveryRepository.Event(eventId, merchantId, type);
    }

    private static UUID uuid(JsonNode node) {
        try {
            return node.isTextual() ? UUID.fromString(node.asText()) : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
