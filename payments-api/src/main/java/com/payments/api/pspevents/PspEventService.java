package com.payments.api.pspevents;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.PaymentStatus;
import com.payments.api.common.Json;
import com.payments.api.common.OperationsRepository;
import com.payments.api.common.Refusal;
import com.payments.api.config.ResolutionConfig;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Locked;
import com.payments.api.payment.PspAmountMismatch;
import com.payments.api.resolver.ResolverMetrics;
import com.payments.contracts.Topics;
import com.payments.contracts.events.PaymentDisputed;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.config.PspConfig;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.WebhookRejectedException;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/**
 * PSP webhooks (docs/resolver.md, docs/stripe.md): the configured PSP's adapter verifies the signature and its age
 * ({@link PspPort#verifyWebhook}; refused, nothing stored), then in one transaction the event is stored once by id and
 * applied as a hint through the state machines. Never backwards: an event that contradicts a final state opens an
 * operations item and changes no money. A charge event settles an UNKNOWN payment; a refund event settles a PENDING
 * refund (a failure releases its reservation, once: the guarded update on PENDING decides, against a concurrent copy
 * and against refunds-worker alike); a dispute becomes an operations item and a {@code PaymentDisputed} event.
 */
@ApplicationScoped
public class PspEventService {
    static final String ACTOR = "webhook";
    static final String REASON_DISPUTED = "payment_disputed";

    /** What happened to a delivery. */
    public record Receipt(String eventId, boolean duplicate, String outcome) {}

    private final Pool pool;
    private final PspPort psp;
    private final PspConfig pspConfig;
    private final PspEventRepository events;
    private final OperationsRepository operations;
    private final PspAmountMismatch mismatch;
    private final PaymentOutcomeService outcomes;
    private final ResolverMetrics metrics;
    private final ResolutionConfig.Webhooks config;
    private final ObjectMapper mapper;
    private final Json json;
    private final TraceHeaders traceHeaders;

    public PspEventService(
            Pool pool,
            PspPort psp,
            PspConfig pspConfig,
            PspEventRepository events,
            OperationsRepository operations,
            PspAmountMismatch mismatch,
            PaymentOutcomeService outcomes,
            ResolverMetrics metrics,
            ResolutionConfig config,
            ObjectMapper mapper,
            Json json,
            TraceHeaders traceHeaders) {
        this.pool = pool;
        this.psp = psp;
        this.pspConfig = pspConfig;
        this.events = events;
        this.operations = operations;
        this.mismatch = mismatch;
        this.outcomes = outcomes;
        this.metrics = metrics;
        this.config = config.webhooks();
        this.mapper = mapper;
        this.json = json;
        this.traceHeaders = traceHeaders;
    }

    /**
     * One delivery to the route of {@code provider} ({@code sandbox}: {@code Psp-Signature}; {@code stripe}:
     * {@code Stripe-Signature}).
     *
     * @param header the request's header of a name, null when absent
     */
    public Uni<Receipt> receive(String provider, byte[] body, Function<String, String> header) {
        if (!provider.equals(psp.provider())) {
            throw reject(new Refusal(
                    Refusal.Kind.NOT_FOUND,
                    "webhook_provider_not_configured",
                    "Not found",
                    "This deployment's PSP is " + psp.provider() + "; its webhooks go to " + path(psp.provider()),
                    null));
        }
        if (body.length > config.maxBodyBytes()) {
            throw reject(Refusal.invalid("body_too_large", "The request body is too large"));
        }
        if (!secretConfigured(provider)) {
            throw new Refusal(
                    Refusal.Kind.UNAVAILABLE,
                    "webhooks_not_configured",
                    "Webhooks not configured",
                    "The webhook secret is not configured; deliver again later",
                    60);
        }
        PspEvent event = verify(provider, body, header);
        String payload = new String(body, StandardCharsets.UTF_8);
        return pool.withTransaction(conn -> events.insert(conn, event.eventId(), event.providerType(), payload)
                        .flatMap(stored -> !stored
                                ? Uni.createFrom().item(new Receipt(event.eventId(), true, "duplicate"))
                                : apply(conn, event).flatMap(outcome -> events.processed(conn, event.eventId(), outcome)
                                        .replaceWith(new Receipt(event.eventId(), false, outcome)))))
                .invoke(receipt -> {
                    metrics.webhook(receipt.outcome());
                    Log.infof("Webhook %s %s: %s", receipt.eventId(), event.providerType(), receipt.outcome());
                });
    }

    static String path(String provider) {
        return provider.equals("stripe") ? "/v1/psp/stripe/webhooks" : "/v1/psp/webhooks";
    }

    static String signatureHeader(String provider) {
        return provider.equals("stripe") ? "Stripe-Signature" : "Psp-Signature";
    }

    /**
     * Without a secret nothing can be verified: 503, so that the PSP delivers again once it is set. The sandbox's
     * current secret is required ({@code payments.webhooks.secret}; a previous one alone is not enough, docs/resolver.md);
     * Stripe's: any of {@code psp.stripe.webhook-secrets}.
     */
    private boolean secretConfigured(String provider) {
        if (provider.equals("stripe")) {
            return pspConfig.stripe().webhookSecrets().orElse(List.of()).stream()
                    .anyMatch(s -> s != null && !s.isBlank());
        }
        return config.secret().filter(s -> !s.isBlank()).isPresent();
    }

    private PspEvent verify(String provider, byte[] body, Function<String, String> header) {
        PspEvent event;
        try {
            event = psp.verifyWebhook(body, header);
        } catch (WebhookRejectedException e) {
            String name = signatureHeader(provider);
            throw reject(
                    switch (e.reason()) {
                        case SIGNATURE ->
                            Refusal.invalid(
                                    "invalid_webhook_signature",
                                    "The " + name + " header is missing or does not match");
                        case STALE ->
                            Refusal.invalid(
                                    "stale_webhook", "The " + name + " timestamp is outside the accepted tolerance");
                        case NOT_AN_EVENT ->
                            Refusal.invalid(
                                    "invalid_webhook", "The event must be a JSON object with id, type and data");
                    });
        }
        if (event.eventId().isEmpty() || event.eventId().length() > 255) {
            throw reject(Refusal.invalid("invalid_webhook", "The event id must have 1 to 255 characters"));
        }
        return event;
    }

    private Refusal reject(Refusal problem) {
        metrics.webhook("rejected");
        Log.warnf("Webhook refused: %s", problem.code());
        return problem;
    }

    private Uni<String> apply(SqlClient conn, PspEvent event) {
        return switch (event.type()) {
            case CHARGE_SUCCEEDED, CHARGE_FAILED -> charge(conn, event);
            case REFUND_SUCCEEDED, REFUND_FAILED -> refund(conn, event);
            case REFUND_PENDING -> refundPending(conn, event);
            case DISPUTE_CREATED -> dispute(conn, event);
            case IGNORED -> Uni.createFrom().item("ignored");
        };
    }

    private Uni<String> charge(SqlClient conn, PspEvent event) {
        UUID paymentId = uuid(event.paymentId());
        if (paymentId == null) {
            return unknownSubject(conn, event, "unknown_payment");
        }
        return PaymentRepository.lock(conn, paymentId).flatMap(current -> {
            if (current == null) {
                return unknownSubject(conn, event, "unknown_payment");
            }
            boolean succeeded = event.type() == PspEvent.Type.CHARGE_SUCCEEDED;
            String chargeId = event.pspChargeId();
            ObjectNode data = data(event);
            if (!PspAmountMismatch.sameMoney(current, data)) {
                warnConflict(event, current.id(), current.status().name(), PspAmountMismatch.REASON);
                ObjectNode context = mapper.createObjectNode()
                        .put("eventId", event.eventId())
                        .put("eventType", event.providerType());
                return mismatch.open(conn, current, data, ACTOR, context).replaceWith("conflict");
            }
            if (current.status().isFinal()) {
                boolean agrees = (current.status() == PaymentStatus.CAPTURED) == succeeded;
                return agrees
                        ? Uni.createFrom().item("no_change")
                        : conflict(
                                conn,
                                event,
                                "payment",
                                current.id(),
                                current.status().name(),
                                succeeded ? "webhook_succeeded_after_failed" : "webhook_failed_after_captured",
                                paymentDetails(current));
            }
            if (succeeded && chargeId == null) {
                return conflict(
                        conn,
                        event,
                        "payment",
                        current.id(),
                        current.status().name(),
                        "webhook_without_charge_id",
                        paymentDetails(current));
            }
            PaymentOutcome outcome = succeeded
                    ? PaymentOutcome.captured(paymentId, chargeId, ACTOR)
                    : PaymentOutcome.failed(
                            paymentId, chargeId, event.code() != null ? event.code() : "declined", ACTOR);
            return outcomes.record(conn, outcome, traceHeaders.current()).map(recorded -> {
                Log.infof(
                        "Webhook %s: payment %s %s -> %s (attempt %d)",
                        event.eventId(),
                        paymentId,
                        current.status(),
                        recorded.payment().status(),
                        current.attempts());
                return "applied";
            });
        });
    }

    /**
     * A refund's final outcome at the PSP, settled by the schema's {@code settle_refund} (as refunds-worker does)
     * only if the refund is PENDING: a success books the ledger and writes {@code RefundSucceeded}; a failure releases
     * the reservation and writes {@code RefundFailed}. Whoever comes second (a copy of the event, another event about
     * the same outcome, refunds-worker's own outcome) changes nothing; an outcome that contradicts the final state
     * opens an operations item.
     */
    private Uni<String> refund(SqlClient conn, PspEvent event) {
        UUID refundId = uuid(event.refundId());
        if (refundId == null) {
            return unknownSubject(conn, event, "unknown_refund");
        }
        boolean succeeded = event.type() == PspEvent.Type.REFUND_SUCCEEDED;
        return events.lockRefund(conn, refundId).flatMap(refund -> {
            if (refund == null) {
                return unknownSubject(conn, event, "unknown_refund");
            }
            if ((event.amount() > 0 && event.amount() != refund.amount())
                    || (event.currency() != null && !event.currency().equals(refund.currency()))) {
                return conflict(
                        conn,
                        event,
                        "refund",
                        refund.id(),
                        refund.status(),
                        "webhook_refund_amount_mismatch",
                        refundDetails(refund));
            }
            if (!refund.pending()) {
                boolean agrees = refund.status().equals(succeeded ? "SUCCEEDED" : "FAILED");
                return agrees
                        ? Uni.createFrom().item("no_change")
                        : conflict(
                                conn,
                                event,
                                "refund",
                                refund.id(),
                                refund.status(),
                                succeeded
                                        ? "webhook_refund_succeeded_after_failed"
                                        : "webhook_refund_failed_after_succeeded",
                                refundDetails(refund));
            }
            String status = succeeded ? "SUCCEEDED" : "FAILED";
            String failureCode = succeeded ? null : (event.code() != null ? event.code() : "psp_refund_failed");
            String pspReference = succeeded ? event.pspObjectId() : null;
            return events.settleRefund(conn, refund.id(), status, pspReference, failureCode, traceHeaders.current())
                    .map(settled -> {
                        if (!settled) {
                            return "no_change";
                        }
                        Log.infof("Webhook %s: refund %s PENDING -> %s", event.eventId(), refund.id(), status);
                        return "applied";
                    });
        });
    }

    /** A refund the PSP still works on: nothing to do, unless it is not ours. */
    private Uni<String> refundPending(SqlClient conn, PspEvent event) {
        UUID refundId = uuid(event.refundId());
        if (refundId == null) {
            return unknownSubject(conn, event, "unknown_refund");
        }
        return events.lockRefund(conn, refundId)
                .flatMap(refund -> refund != null
                        ? Uni.createFrom().item("no_change")
                        : unknownSubject(conn, event, "unknown_refund"));
    }

    /**
     * A cardholder disputed a charge: an operations item for the payment (one OPEN per payment) and a
     * {@code PaymentDisputed} event. A dispute names only the PSP's charge, which we learn when the payment is
     * captured; a dispute that comes before that (its capture's answer was lost and is not settled yet) is refused
     * with 409, stores nothing, and the PSP delivers it again, until {@code payments.webhooks.dispute-wait} after the
     * event was created: then it is stored as {@code unknown_payment} for a human.
     */
    private Uni<String> dispute(SqlClient conn, PspEvent event) {
        if (event.pspChargeId() == null) {
            return unknownSubject(conn, event, "unknown_payment");
        }
        return events.lockPaymentByPspReference(conn, event.pspChargeId()).flatMap(payment -> {
            if (payment == null) {
                Instant created = event.created() != null ? event.created() : Instant.now();
                if (created.plus(config.disputeWait()).isAfter(Instant.now())) {
                    Log.infof(
                            "Webhook %s: dispute of %s, a charge we do not know yet: refused, the PSP delivers it"
                                    + " again",
                            event.eventId(), event.pspChargeId());
                    return Uni.createFrom()
                            .failure(reject(new Refusal(
                                    Refusal.Kind.CONFLICT,
                                    "webhook_charge_not_yet_known",
                                    "Conflict",
                                    "No payment is known under " + event.pspChargeId() + " yet; deliver again later",
                                    null)));
                }
                return unknownSubject(conn, event, "unknown_payment");
            }
            ObjectNode details = mapper.createObjectNode();
            details.put("eventId", event.eventId());
            details.put("eventType", event.providerType());
            details.put("reason", REASON_DISPUTED);
            details.put("disputeId", event.pspObjectId());
            details.put("disputeReason", event.code());
            details.put("disputedAmount", event.amount());
            details.put("currency", event.currency());
            details.put("pspReference", event.pspChargeId());
            details.put("paymentStatus", payment.status().name());
            details.put("paymentAmount", payment.amount());
            details.put(
                    "action",
                    "The cardholder disputed this payment; the PSP holds the disputed amount. Answer the dispute at"
                            + " the PSP with the merchant's evidence before its deadline, then resolve this item"
                            + " (docs/operations.md, Disputes).");
            PaymentDisputed disputed = PaymentDisputed.of(
                    payment.id(),
                    payment.merchantId(),
                    payment.orderId(),
                    event.amount(),
                    event.currency() != null ? event.currency() : payment.currency(),
                    event.pspChargeId(),
                    event.pspObjectId(),
                    event.code(),
                    payment.metadata());
            Log.warnf(
                    "Webhook %s: payment %s disputed (%s, %s), queued for operations",
                    event.eventId(), payment.id(), event.pspObjectId(), event.code());
            return operations
                    .open(conn, "payment", payment.id().toString(), REASON_DISPUTED, details.toString())
                    .chain(() -> events.enqueue(
                            conn,
                            payment.id(),
                            json.outboxRow(Topics.PAYMENT_EVENTS, disputed, traceHeaders.current())))
                    .replaceWith("applied");
        });
    }

    private Uni<String> unknownSubject(SqlClient conn, PspEvent event, String outcome) {
        Log.warnf(
                "Webhook %s %s: not ours (%s), queued for operations", event.eventId(), event.providerType(), outcome);
        return operations
                .open(
                        conn,
                        "webhook",
                        event.eventId(),
                        outcome,
                        details(event, outcome, null).toString())
                .replaceWith(outcome);
    }

    private Uni<String> conflict(
            SqlClient conn,
            PspEvent event,
            String subjectType,
            UUID subject,
            String status,
            String reason,
            ObjectNode subjectDetails) {
        warnConflict(event, subject, status, reason);
        return operations
                .open(
                        conn,
                        subjectType,
                        subject.toString(),
                        reason,
                        details(event, reason, subjectDetails).toString())
                .replaceWith("conflict");
    }

    private static void warnConflict(PspEvent event, UUID subject, String status, String reason) {
        Log.warnf(
                "Webhook %s %s contradicts %s in %s: %s, queued for operations",
                event.eventId(), event.providerType(), subject, status, reason);
    }

    private ObjectNode details(PspEvent event, String reason, ObjectNode subject) {
        ObjectNode node = mapper.createObjectNode();
        node.put("eventId", event.eventId());
        node.put("eventType", event.providerType());
        node.put("reason", reason);
        node.set("data", data(event));
        if (subject != null) {
            node.setAll(subject);
        }
        return node;
    }

    private ObjectNode paymentDetails(Locked payment) {
        return mapper.createObjectNode()
                .put("paymentStatus", payment.status().name())
                .put("paymentAmount", payment.amount())
                .put("paymentCurrency", payment.currency());
    }

    private ObjectNode refundDetails(PspEventRepository.LockedRefund refund) {
        return mapper.createObjectNode()
                .put("paymentId", refund.paymentId().toString())
                .put("refundStatus", refund.status())
                .put("refundAmount", refund.amount())
                .put("refundCurrency", refund.currency());
    }

    /** What the event says, in the PSP-neutral names of {@link PspEvent}; amount and currency only when it has them. */
    private ObjectNode data(PspEvent event) {
        ObjectNode data = mapper.createObjectNode();
        data.put("id", event.pspObjectId());
        if (event.paymentId() != null) {
            data.put("paymentId", event.paymentId());
        }
        if (event.refundId() != null) {
            data.put("refundId", event.refundId());
        }
        if (event.pspChargeId() != null) {
            data.put("pspChargeId", event.pspChargeId());
        }
        if (event.amount() > 0) {
            data.put("amount", event.amount());
        }
        if (event.currency() != null) {
            data.put("currency", event.currency());
        }
        if (event.code() != null) {
            data.put("code", event.code());
        }
        return data;
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
