package com.payments.api.pspevents;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.OperationsRepository;
import com.payments.api.common.Refusal;
import com.payments.api.resolver.ResolverMetrics;
import com.payments.psp.port.PspEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * What the handlers of PSP events share: the operations items of an event that is not ours or contradicts a final
 * state (they change no money), the event's data in PSP-neutral names, and the refusal of a delivery.
 */
@ApplicationScoped
class PspEventItems {
    private final OperationsRepository operations;
    private final ObjectMapper mapper;
    private final ResolverMetrics metrics;

    public PspEventItems(OperationsRepository operations, ObjectMapper mapper, ResolverMetrics metrics) {
        this.operations = operations;
        this.mapper = mapper;
        this.metrics = metrics;
    }

    /** The delivery is refused (4xx, nothing stored): counted and logged by its code. */
    Refusal reject(Refusal problem) {
        metrics.webhook("rejected");
        Log.warnf("Webhook refused: %s", problem.code());
        return problem;
    }

    /** The event names a payment or refund we do not have: an item for a human. */
    Uni<String> unknownSubject(SqlClient conn, PspEvent event, String outcome) {
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

    /** The event contradicts the subject's state: an item for a human, no change. */
    Uni<String> conflict(
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

    static void warnConflict(PspEvent event, UUID subject, String status, String reason) {
        Log.warnf(
                "Webhook %s %s contradicts %s in %s: %s, queued for operations",
                event.eventId(), event.providerType(), subject, status, reason);
    }

    ObjectNode node() {
        return mapper.createObjectNode();
    }

    private ObjectNode details(PspEvent event, String reason, ObjectNode subject) {
        ObjectNode node = node();
        node.put("eventId", event.eventId());
        node.put("eventType", event.providerType());
        node.put("reason", reason);
        node.set("data", data(event));
        if (subject != null) {
            node.setAll(subject);
        }
        return node;
    }

    /** What the event says, in the PSP-neutral names of {@link PspEvent}; amount and currency only when it has them. */
    ObjectNode data(PspEvent event) {
        ObjectNode data = node();
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

    /** Our id in an event, null when it is none of ours (not a UUID). */
    static UUID uuid(String text) {
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
