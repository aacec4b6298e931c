package com.payments.api.pspevents;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.Payment;
import com.payments.api.common.Json;
import com.payments.api.common.OperationsRepository;
import com.payments.api.common.Refusal;
import com.payments.api.config.ResolutionConfig;
import com.payments.contracts.Topics;
import com.payments.contracts.events.PaymentDisputed;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.port.PspEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;

/**
 * A cardholder disputed a charge: an operations item for the payment (one OPEN per payment) and a
 * {@code PaymentDisputed} event. A dispute names only the PSP's charge, which we learn when the payment is captured; a
 * dispute that comes before that (its capture's answer was lost and is not settled yet) is refused with 409, stores
 * nothing, and the PSP delivers it again, until {@code payments.webhooks.dispute-wait} after the event was created:
 * then it is stored as {@code unknown_payment} for a human.
 */
@ApplicationScoped
class DisputeEvents implements PspEventHandler {
    static final String REASON_DISPUTED = "payment_disputed";

    private final PspEventRepository events;
    private final OperationsRepository operations;
    private final PspEventItems items;
    private final Json json;
    private final TraceHeaders traceHeaders;
    private final Duration disputeWait;

    public DisputeEvents(
            PspEventRepository events,
            OperationsRepository operations,
            PspEventItems items,
            Json json,
            TraceHeaders traceHeaders,
            ResolutionConfig config) {
        this.events = events;
        this.operations = operations;
        this.items = items;
        this.json = json;
        this.traceHeaders = traceHeaders;
        this.disputeWait = config.webhooks().disputeWait();
    }

    @Override
    public Uni<String> apply(SqlClient conn, PspEvent event) {
        if (event.pspChargeId() == null) {
            return items.unknownSubject(conn, event, "unknown_payment");
        }
        return events.lockPaymentByPspReference(conn, event.pspChargeId()).flatMap(payment -> {
            if (payment == null) {
                Instant created = event.created() != null ? event.created() : Instant.now();
                if (created.plus(disputeWait).isAfter(Instant.now())) {
                    Log.infof(
                            "Webhook %s: dispute of %s, a charge we do not know yet: refused, the PSP delivers it"
                                    + " again",
                            event.eventId(), event.pspChargeId());
                    return Uni.createFrom()
                            .failure(items.reject(new Refusal(
                                    Refusal.Kind.CONFLICT,
                                    "webhook_charge_not_yet_known",
                                    "Conflict",
                                    "No payment is known under " + event.pspChargeId() + " yet; deliver again later",
                                    null)));
                }
                return items.unknownSubject(conn, event, "unknown_payment");
            }
            Log.warnf(
                    "Webhook %s: payment %s disputed (%s, %s), queued for operations",
                    event.eventId(), payment.id(), event.pspObjectId(), event.code());
            return operations
                    .open(conn, "payment", payment.id().toString(), REASON_DISPUTED, details(event, payment))
                    .chain(() -> events.enqueue(
                            conn,
                            payment.id(),
                            json.outboxRow(Topics.PAYMENT_EVENTS, disputed(event, payment), traceHeaders.current())))
                    .replaceWith("applied");
        });
    }

    private String details(PspEvent event, Payment payment) {
        ObjectNode details = items.node();
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
        return details.toString();
    }

    private static PaymentDisputed disputed(PspEvent event, Payment payment) {
        return PaymentDisputed.of(
                payment.id(),
                payment.merchantId(),
                payment.orderId(),
                event.amount(),
                event.currency() != null ? event.currency() : payment.currency(),
                event.pspChargeId(),
                event.pspObjectId(),
                event.code(),
                payment.metadata());
    }
}
