package com.payments.api.webhooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.PaymentStatus;
import com.payments.api.capture.PaymentOutcome;
import com.payments.api.capture.PaymentOutcomeService;
import com.payments.api.common.Refusal;
import com.payments.api.config.ResolutionConfig;
import com.payments.api.operations.OperationsRepository;
import com.payments.api.resolver.PspAmountMismatch;
import com.payments.api.resolver.ResolverMetrics;
import com.payments.api.resolver.ResolverRepository;
import com.payments.api.resolver.ResolverRepository.Locked;
import com.payments.contracts.tracing.TraceHeaders;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * {@code POST /v1/psp/webhooks} (docs/resolver.md): verify the signature and its age (refused, nothing stored), then in
 * one transaction store the event once by id and apply it as a hint through the state machine. Never backwards: an
 * event that contradicts a final state opens an operations item and changes no money. Refund events change nothing
 * (refunds-worker owns refunds and asks the PSP itself).
 */
@ApplicationScoped
public class WebhookService {
    static final String ACTOR = "webhook";

    /** What happened to a delivery. */
    public record Receipt(String eventId, boolean duplicate, String outcome) {}

    private record Event(String id, String type, JsonNode data) {}

    private final Pool pool;
    private final WebhookRepository events;
    private final ResolverRepository payments;
    private final OperationsRepository operations;
    private final PspAmountMismatch mismatch;
    private final PaymentOutcomeService outcomes;
    private final ResolverMetrics metrics;
    private final ResolutionConfig.Webhooks config;
    private final ObjectMapper mapper;
    private final TraceHeaders traceHeaders;

    public WebhookService(
            Pool pool,
            WebhookRepository events,
            ResolverRepository payments,
            OperationsRepository operations,
            PspAmountMismatch mismatch,
            PaymentOutcomeService outcomes,
            ResolverMetrics metrics,
            ResolutionConfig config,
            ObjectMapper mapper,
            TraceHeaders traceHeaders) {
        this.pool = pool;
        this.events = events;
        this.payments = payments;
        this.operations = operations;
        this.mismatch = mismatch;
        this.outcomes = outcomes;
        this.metrics = metrics;
        this.config = config.webhooks();
        this.mapper = mapper;
        this.traceHeaders = traceHeaders;
    }

    public Uni<Receipt> receive(byte[] body, String signature) {
        List<String> secrets = secrets();
        if (body.length > config.maxBodyBytes()) {
            throw reject(Refusal.invalid("body_too_large", "The request body is too large"));
        }
        switch (WebhookSignature.verify(signature, body, secrets, Instant.now(), config.tolerance())) {
            case INVALID ->
                throw reject(Refusal.invalid(
                        "invalid_webhook_signature", "The Psp-Signature header is missing or does not match"));
            case STALE ->
                throw reject(Refusal.invalid(
                        "stale_webhook", "The Psp-Signature timestamp is outside the accepted tolerance"));
            case VALID -> {}
        }
        Event event = parse(body);
        String payload = new String(body, StandardCharsets.UTF_8);
        return pool.withTransaction(conn -> events.insert(conn, event.id(), event.type(), payload)
                        .flatMap(stored -> !stored
                                ? Uni.createFrom().item(new Receipt(event.id(), true, "duplicate"))
                                : apply(conn, event).flatMap(outcome -> events.processed(conn, event.id(), outcome)
                                        .replaceWith(new Receipt(event.id(), false, outcome)))))
                .invoke(receipt -> {
                    metrics.webhook(receipt.outcome());
                    Log.infof("Webhook %s %s: %s", receipt.eventId(), event.type(), receipt.outcome());
                });
    }

    /** The current secret (without it: unavailable) and, during a roll, the previous one; a blank value is no key. */
    private List<String> secrets() {
        String current = config.secret()
                .filter(s -> !s.isBlank())
                .orElseThrow(() -> new Refusal(
                        Refusal.Kind.UNAVAILABLE,
                        "webhooks_not_configured",
                        "Webhooks not configured",
                        "The webhook secret is not configured; deliver again later",
                        60));
        return config.previousSecret()
                .filter(s -> !s.isBlank())
                .map(previous -> List.of(current, previous))
                .orElse(List.of(current));
    }

    private Refusal reject(Refusal problem) {
        metrics.webhook("rejected");
        Log.warnf("Webhook refused: %s", problem.code());
        return problem;
    }

    private Event parse(byte[] body) {
        JsonNode root;
        try {
            root = mapper.readTree(body);
        } catch (IOException e) {
            root = null;
        }
        if (root == null
                || !root.path("id").isTextual()
                || root.path("id").asText().isEmpty()
                || root.path("id").asText().length() > 255
                || !root.path("type").isTextual()
                || !root.path("data").isObject()) {
            throw reject(Refusal.invalid("invalid_webhook", "The event must be a JSON object with id, type and data"));
        }
        return new Event(root.get("id").asText(), root.get("type").asText(), root.get("data"));
    }

    private Uni<String> apply(SqlClient conn, Event event) {
        return switch (event.type()) {
            case "charge.succeeded", "charge.failed" -> charge(conn, event);
            case "refund.succeeded", "refund.failed" -> refund(conn, event);
            default -> Uni.createFrom().item("ignored");
        };
    }

    private Uni<String> charge(SqlClient conn, Event event) {
        UUID paymentId = uuid(event.data().path("reference").asText(null));
        if (paymentId == null) {
            return unknownSubject(conn, event, "unknown_payment");
        }
        return payments.lock(conn, paymentId).flatMap(current -> {
            if (current == null) {
                return unknownSubject(conn, event, "unknown_payment");
            }
            boolean succeeded = event.type().equals("charge.succeeded");
            String chargeId = event.data().path("id").asText(null);
            if (!PspAmountMismatch.sameMoney(current, event.data())) {
                warnConflict(event, current, PspAmountMismatch.REASON);
                ObjectNode context =
                        mapper.createObjectNode().put("eventId", event.id()).put("eventType", event.type());
                return mismatch.open(conn, current, event.data(), ACTOR, context)
                        .replaceWith("conflict");
            }
            if (current.status().isFinal()) {
                boolean agrees = (current.status() == PaymentStatus.CAPTURED) == succeeded;
                return agrees
                        ? Uni.createFrom().item("no_change")
                        : conflict(
                                conn,
                                event,
                                current,
                                succeeded ? "webhook_succeeded_after_failed" : "webhook_failed_after_captured");
            }
            if (succeeded && chargeId == null) {
                return conflict(conn, event, current, "webhook_without_charge_id");
            }
            PaymentOutcome outcome = succeeded
                    ? PaymentOutcome.captured(paymentId, chargeId, ACTOR)
                    : PaymentOutcome.failed(
                            paymentId,
                            chargeId,
                            event.data().path("declineCode").asText("declined"),
                            ACTOR);
            return outcomes.record(conn, outcome, traceHeaders.current()).map(recorded -> {
                Log.infof(
                        "Webhook %s: payment %s %s -> %s (attempt %d)",
                        event.id(),
                        paymentId,
                        current.status(),
                        recorded.payment().status(),
                        current.attempts());
                return "applied";
            });
        });
    }

    /** Refund outcomes belong to refunds-worker (it asks the PSP itself): stored as a hint, nothing changed. */
    private Uni<String> refund(SqlClient conn, Event event) {
        UUID refundId = uuid(event.data().path("reference").asText(null));
        if (refundId == null) {
            return unknownSubject(conn, event, "unknown_refund");
        }
        return events.refundExists(conn, refundId)
                .flatMap(exists ->
                        exists ? Uni.createFrom().item("no_change") : unknownSubject(conn, event, "unknown_refund"));
    }

    private Uni<String> unknownSubject(SqlClient conn, Event event, String outcome) {
        Log.warnf("Webhook %s %s: not ours (%s), queued for operations", event.id(), event.type(), outcome);
        return operations
                .open(conn, "webhook", event.id(), outcome, details(event, null, outcome))
                .replaceWith(outcome);
    }

    private Uni<String> conflict(SqlClient conn, Event event, Locked current, String reason) {
        warnConflict(event, current, reason);
        return operations
                .open(conn, "payment", current.id().toString(), reason, details(event, current, reason))
                .replaceWith("conflict");
    }

    private static void warnConflict(Event event, Locked current, String reason) {
        Log.warnf(
                "Webhook %s %s contradicts payment %s in %s: %s, queued for operations",
                event.id(), event.type(), current.id(), current.status(), reason);
    }

    private String details(Event event, Locked current, String reason) {
        ObjectNode node = mapper.createObjectNode();
        node.put("eventId", event.id());
        node.put("eventType", event.type());
        node.put("reason", reason);
        node.set("data", event.data());
        if (current != null) {
            node.put("paymentStatus", current.status().name());
            node.put("paymentAmount", current.amount());
            node.put("paymentCurrency", current.currency());
        }
        return node.toString();
    }

    private static UUID uuid(String text) {
        if (text == null) {
            return null;
        }
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
