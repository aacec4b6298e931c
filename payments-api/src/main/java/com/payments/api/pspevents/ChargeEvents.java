package com.payments.api.pspevents;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.PaymentStatus;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Locked;
import com.payments.api.payment.PspAmountMismatch;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.port.PspEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * A charge succeeded or failed at the PSP: settles an UNKNOWN or PROCESSING payment through the payment core's
 * {@link PaymentOutcomeService}; never backwards (a contradiction of a final state is an operations item).
 */
@ApplicationScoped
class ChargeEvents implements PspEventHandler {
    private final PspEventRepository events;
    private final PspEventItems items;
    private final PspAmountMismatch mismatch;
    private final PaymentOutcomeService outcomes;
    private final TraceHeaders traceHeaders;

    public ChargeEvents(
            PspEventRepository events,
            PspEventItems items,
            PspAmountMismatch mismatch,
            PaymentOutcomeService outcomes,
            TraceHeaders traceHeaders) {
        this.events = events;
        this.items = items;
        this.mismatch = mismatch;
        this.outcomes = outcomes;
        this.traceHeaders = traceHeaders;
    }

    @Override
    public Uni<String> storeInOneStatement(SqlClient client, PspEvent event, String payload) {
        UUID paymentId = PspEventItems.uuid(event.paymentId());
        if (paymentId == null) {
            return Uni.createFrom().nullItem();
        }
        String status = event.type() == PspEvent.Type.CHARGE_SUCCEEDED ? "CAPTURED" : "FAILED";
        return events.storeIfPaymentSettled(client, event, payload, paymentId, status);
    }

    @Override
    public Uni<String> apply(SqlClient conn, PspEvent event) {
        UUID paymentId = PspEventItems.uuid(event.paymentId());
        if (paymentId == null) {
            return items.unknownSubject(conn, event, "unknown_payment");
        }
        return PaymentRepository.lock(conn, paymentId).flatMap(current -> {
            if (current == null) {
                return items.unknownSubject(conn, event, "unknown_payment");
            }
            boolean succeeded = event.type() == PspEvent.Type.CHARGE_SUCCEEDED;
            String chargeId = event.pspChargeId();
            ObjectNode data = items.data(event);
            if (!PspAmountMismatch.sameMoney(current, data)) {
                PspEventItems.warnConflict(event, current.id(), current.status().name(), PspAmountMismatch.REASON);
                ObjectNode context =
                        items.node().put("eventId", event.eventId()).put("eventType", event.providerType());
                return mismatch.open(conn, current, data, ACTOR, context).replaceWith("conflict");
            }
            if (current.status().isFinal()) {
                boolean agrees = (current.status() == PaymentStatus.CAPTURED) == succeeded;
                return agrees
                        ? Uni.createFrom().item("no_change")
                        : items.conflict(
                                conn,
                                event,
                                "payment",
                                current.id(),
                                current.status().name(),
                                succeeded ? "webhook_succeeded_after_failed" : "webhook_failed_after_captured",
                                paymentDetails(current));
            }
            if (succeeded && chargeId == null) {
                return items.conflict(
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

    private ObjectNode paymentDetails(Locked payment) {
        return items.node()
                .put("paymentStatus", payment.status().name())
                .put("paymentAmount", payment.amount())
                .put("paymentCurrency", payment.currency());
    }
}
