package com.payments.api.pspevents;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.contracts.sql.RefundSettlement;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.port.PspEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * A refund's final outcome at the PSP, settled by the schema's {@code settle_refund} (as refunds-worker does) only if
 * the refund is PENDING: a success books the ledger and writes {@code RefundSucceeded}; a failure releases the
 * reservation and writes {@code RefundFailed}. Whoever comes second (a copy of the event, another event about the same
 * outcome, refunds-worker's own outcome) changes nothing; an outcome that contradicts the final state opens an
 * operations item.
 */
@ApplicationScoped
class RefundEvents implements PspEventHandler {
    private final PspEventRepository events;
    private final PspEventItems items;
    private final TraceHeaders traceHeaders;

    public RefundEvents(PspEventRepository events, PspEventItems items, TraceHeaders traceHeaders) {
        this.events = events;
        this.items = items;
        this.traceHeaders = traceHeaders;
    }

    @Override
    public Uni<String> storeInOneStatement(SqlClient client, PspEvent event, String payload) {
        UUID refundId = PspEventItems.uuid(event.refundId());
        if (refundId == null) {
            return Uni.createFrom().nullItem();
        }
        return events.storeRefundEvent(client, event, payload, settlement(refundId, event))
                .invoke(outcome -> {
                    if ("applied".equals(outcome)) {
                        Log.infof("Webhook %s: refund %s PENDING -> %s", event.eventId(), refundId, status(event));
                    }
                });
    }

    @Override
    public Uni<String> apply(SqlClient conn, PspEvent event) {
        UUID refundId = PspEventItems.uuid(event.refundId());
        if (refundId == null) {
            return items.unknownSubject(conn, event, "unknown_refund");
        }
        boolean succeeded = event.type() == PspEvent.Type.REFUND_SUCCEEDED;
        return events.lockRefund(conn, refundId).flatMap(refund -> {
            if (refund == null) {
                return items.unknownSubject(conn, event, "unknown_refund");
            }
            if ((event.amount() > 0 && event.amount() != refund.amount())
                    || (event.currency() != null && !event.currency().equals(refund.currency()))) {
                return items.conflict(
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
                        : items.conflict(
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
            return settlement(refund.id(), event).settle(conn).map(settled -> {
                if (!settled) {
                    return "no_change";
                }
                Log.infof("Webhook %s: refund %s PENDING -> %s", event.eventId(), refund.id(), status(event));
                return "applied";
            });
        });
    }

    /** The refund's settlement the event asks for. */
    private RefundSettlement settlement(UUID refundId, PspEvent event) {
        boolean succeeded = event.type() == PspEvent.Type.REFUND_SUCCEEDED;
        String failureCode = succeeded ? null : (event.code() != null ? event.code() : "psp_refund_failed");
        String pspReference = succeeded ? event.pspObjectId() : null;
        return new RefundSettlement(refundId, status(event), pspReference, failureCode, ACTOR, traceHeaders.current());
    }

    private static String status(PspEvent event) {
        return event.type() == PspEvent.Type.REFUND_SUCCEEDED ? "SUCCEEDED" : "FAILED";
    }

    private ObjectNode refundDetails(PspEventRepository.LockedRefund refund) {
        return items.node()
                .put("paymentId", refund.paymentId().toString())
                .put("refundStatus", refund.status())
                .put("refundAmount", refund.amount())
                .put("refundCurrency", refund.currency());
    }
}
