package com.payments.api.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.api.Payment;
import com.payments.api.PaymentStatus;
import com.payments.api.PaymentView;
import com.payments.api.repository.LedgerRepository;
import com.payments.api.repository.OutboxRepository;
import com.payments.api.repository.PaymentRepository;
import com.payments.contracts.Topics;
import com.payments.contracts.events.PaymentCaptured;
import com.payments.contracts.events.PaymentEvent;
import com.payments.contracts.events.PaymentFailed;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;

/**
 * Records a PSP outcome for a payment: the guarded state change, the capture's ledger entries, the
 * PaymentCaptured/PaymentFailed outbox row and the completion of the payment's idempotency key. Callers run
 * {@link #record} inside one transaction ({@code pool.withTransaction(conn -> record(conn, ...))}): the capture
 * path, the resolver of UNKNOWN/stuck payments and the webhook handler all go through here.
 */
@ApplicationScoped
public class PaymentOutcomeService {
    public static final String RESOURCE_PAYMENT = "payment";

    /** The payment after the call and whether this call moved it (false: another path recorded an outcome first). */
    public record Recorded(Payment payment, boolean changed) {}

    private final PaymentRepository payments;
    private final LedgerRepository ledger;
    private final OutboxRepository outbox;
    private final IdempotencyService idempotency;
    private final ObjectMapper mapper;

    public PaymentOutcomeService(
            PaymentRepository payments,
            LedgerRepository ledger,
            OutboxRepository outbox,
            IdempotencyService idempotency,
            ObjectMapper mapper) {
        this.payments = payments;
        this.ledger = ledger;
        this.outbox = outbox;
        this.idempotency = idempotency;
        this.mapper = mapper;
    }

    /**
     * @param traceHeaders trace context for the outbox row (see {@link TraceContext#headers})
     * @return the payment; null when no payment has this id
     */
    public Uni<Recorded> record(SqlClient conn, PaymentOutcome outcome, Map<String, String> traceHeaders) {
        return payments.moveTo(
                        conn,
                        outcome.paymentId(),
                        outcome.status(),
                        outcome.pspReference(),
                        outcome.declineCode(),
                        outcome.lastError(),
                        outcome.actor())
                .flatMap(moved -> moved == null
                        ? payments.findAnyMerchant(conn, outcome.paymentId())
                                .flatMap(current -> current == null
                                        ? Uni.createFrom().nullItem()
                                        : completeKey(conn, current).replaceWith(new Recorded(current, false)))
                        : effects(conn, moved, traceHeaders)
                                .flatMap(v -> completeKey(conn, moved))
                                .replaceWith(new Recorded(moved, true)));
    }

    private Uni<Void> effects(SqlClient conn, Payment p, Map<String, String> traceHeaders) {
        if (p.status() == PaymentStatus.CAPTURED) {
            return ledger.bookCapture(conn, p.merchantId(), p.id(), p.amount(), p.currency())
                    .flatMap(v -> event(
                            conn,
                            PaymentCaptured.of(
                                    p.id(), p.merchantId(), p.orderId(), p.amount(), p.currency(), p.pspReference()),
                            traceHeaders));
        }
        if (p.status() == PaymentStatus.FAILED) {
            return event(
                    conn,
                    PaymentFailed.of(p.id(), p.merchantId(), p.orderId(), p.amount(), p.currency(), p.declineCode()),
                    traceHeaders);
        }
        return Uni.createFrom().voidItem();
    }

    private Uni<Void> event(SqlClient conn, PaymentEvent event, Map<String, String> traceHeaders) {
        return outbox.insert(
                conn,
                event.eventId(),
                event.type(),
                Topics.PAYMENT_EVENTS,
                event.paymentId().toString(),
                json(event),
                json(traceHeaders));
    }

    private Uni<Boolean> completeKey(SqlClient conn, Payment p) {
        ApiResponse response = render(p);
        return idempotency.complete(conn, RESOURCE_PAYMENT, p.id(), response.status(), response.body());
    }

    /** The capture answer for a payment in its current state: 201 CAPTURED, 402 FAILED, 202 otherwise. */
    public ApiResponse render(Payment p) {
        return new ApiResponse(p.status().httpStatus(), jsonBytes(PaymentView.of(p, List.of())), false);
    }

    private String json(Object value) {
        try {
            return mapper.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "Cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    private byte[] jsonBytes(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "Cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }
}
