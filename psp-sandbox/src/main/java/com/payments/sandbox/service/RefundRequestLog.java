package com.payments.sandbox.service;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * When each {@code POST /v1/refunds} arrived and when its answer left (after any latency), so that a test can see
 * which refunds overlapped and in which order one reference's requests came. Keeps the last {@value #CAPACITY}
 * requests, so a benchmark does not grow it without bound.
 */
@ApplicationScoped
public class RefundRequestLog {
    static final int CAPACITY = 10_000;

    /** One request: {@code answeredAt} and {@code status} are null while it is in flight. */
    public record Entry(String reference, Instant receivedAt, Instant answeredAt, Integer status) {}

    /** The log and the number of refund requests in flight now and at most since the last reset. */
    public record Snapshot(int inFlight, int maxInFlight, List<Entry> requests) {}

    /** A request being served; {@link #answered} completes it. */
    public static final class Request {
        private final String reference;
        private final Instant receivedAt;
        private Instant answeredAt;
        private Integer status;

        private Request(String reference, Instant receivedAt) {
            this.reference = reference;
            this.receivedAt = receivedAt;
        }
    }

    private final ArrayDeque<Request> requests = new ArrayDeque<>();
    private int inFlight;
    private int maxInFlight;

    public synchronized Request received(String reference) {
        Request request = new Request(reference, Instant.now());
        if (requests.size() == CAPACITY) {
            requests.removeFirst();
        }
        requests.addLast(request);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return request;
    }

    public synchronized void answered(Request request, int status) {
        if (request.answeredAt == null) {
            request.answeredAt = Instant.now();
            request.status = status;
            inFlight--;
        }
    }

    /** The requests of {@code reference} (all without it), oldest first. */
    public synchronized Snapshot snapshot(String reference) {
        List<Entry> entries = new ArrayList<>();
        for (Request r : requests) {
            if (reference == null || reference.equals(r.reference)) {
                entries.add(new Entry(r.reference, r.receivedAt, r.answeredAt, r.status));
            }
        }
        return new Snapshot(inFlight, maxInFlight, entries);
    }

    /** Forgets the log; requests still in flight keep counting until they are answered. */
    public synchronized void reset() {
        requests.clear();
        maxInFlight = inFlight;
    }
}
