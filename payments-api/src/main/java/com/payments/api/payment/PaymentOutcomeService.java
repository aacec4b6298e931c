package com.payments.api.payment;

import com.payments.api.Payment;
import com.payments.api.common.Json;
import com.payments.api.common.OperationsRepository;
import com.payments.api.common.OutboxRow;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.idempotency.IdempotencyService;
import com.payments.api.idempotency.StoredAnswer;
import com.payments.api.idempotency.StoredAnswers;
import com.payments.api.payment.PaymentRepository.OutcomeRow;
import com.payments.contracts.Topics;
import com.payments.contracts.events.PaymentAuthorized;
import com.payments.contracts.events.PaymentCanceled;
import com.payments.contracts.events.PaymentCaptured;
import com.payments.contracts.events.PaymentEvent;
import com.payments.contracts.events.PaymentExpired;
import com.payments.contracts.events.PaymentFailed;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Records a PSP outcome for a payment: the guarded state change, the capture's ledger entries, the
 * PaymentCaptured/PaymentFailed outbox row and the completion of the payment's idempotency key, all in one
 * statement ({@link PaymentRepository#recordOutcomes}). The capture path, the resolver of UNKNOWN/stuck payments and
 * the webhook handler all go through here.
 */
@ApplicationScoped
public class PaymentOutcomeService {
    public static final String RESOURCE_PAYMENT = "payment";
    /**
     * The operations item the resolver opens for a payment still UNKNOWN at its deadline; a final outcome recorded
     * here resolves it.
     */
    public static final String DEADLINE_REASON = "resolver_deadline";
    /** The item of a PSP answer only an operator could settle ({@link PspChargeAttention}); resolved alike. */
    public static final String ATTENTION_REASON = "psp_charge_needs_attention";

    /** The payment after the call and whether this call moved it (false: another path recorded an outcome first). */
    public record Recorded(Payment payment, boolean changed) {}

    private final PaymentRepository payments;
    private final IdempotencyService idempotency;
    private final OperationsRepository operations;
    private final StoredAnswers answers;
    private final Json json;

    public PaymentOutcomeService(
            PaymentRepository payments,
            IdempotencyService idempotency,
            OperationsRepository operations,
            StoredAnswers answers,
            Json json) {
        this.payments = payments;
        this.idempotency = idempotency;
        this.operations = operations;
        this.answers = answers;
        this.json = json;
    }

    /**
     * Records an outcome for the payment with this id, as it is now (the resolver and the webhook handler, which
     * hold its row lock). A final outcome also resolves the operations item the resolver opened if it gave up on
     * the payment at its deadline: the question it left for a human is answered.
     *
     * @param traceHeaders trace context for the outbox row (the current one, see {@link com.payments.contracts.tracing.TraceHeaders})
     * @return the payment; null when no payment has this id
     */
    public Uni<Recorded> record(SqlClient conn, PaymentOutcome outcome, Map<String, String> traceHeaders) {
        return payments.findAnyMerchant(conn, outcome.paymentId())
                .flatMap(current ->
                        current == null ? Uni.createFrom().nullItem() : record(conn, current, outcome, traceHeaders))
                .call(recorded ->
                        recorded == null || !recorded.payment().status().isFinal()
                                ? Uni.createFrom().voidItem()
                                : resolveItems(conn, outcome, recorded));
    }

    /** The questions the resolver left for a human (its deadline, an answer only an operator could settle). */
    private Uni<Void> resolveItems(SqlClient conn, PaymentOutcome outcome, Recorded recorded) {
        String id = outcome.paymentId().toString();
        String resolution = outcome.actor() + ": " + recorded.payment().status();
        return operations
                .resolve(conn, RESOURCE_PAYMENT, id, DEADLINE_REASON, resolution)
                .flatMap(r -> operations.resolve(conn, RESOURCE_PAYMENT, id, ATTENTION_REASON, resolution))
                .replaceWithVoid();
    }

    /** An outcome ready to be written: the statement's row, and the payment as it leaves it if it applies. */
    public record PreparedOutcome(OutcomeRow row, Payment after) {}

    /**
     * Records an outcome for {@code before}, the payment as the caller last saw it (the resolver and the webhook
     * handler: as they locked it). See {@link #prepare} and {@link #settle}.
     */
    public Uni<Recorded> record(
            SqlClient conn, Payment before, PaymentOutcome outcome, Map<String, String> traceHeaders) {
        return record(conn, before, outcome, null, traceHeaders);
    }

    /** As {@link #record(SqlClient, Payment, PaymentOutcome, Map)}, with the PSP call it came from (may be null). */
    public Uni<Recorded> record(
            SqlClient conn, Payment before, PaymentOutcome outcome, PspCall call, Map<String, String> traceHeaders) {
        PreparedOutcome prepared = prepare(before, outcome, traceHeaders);
        return payments.recordOutcomes(
                        conn, outcome.actor(), List.of(prepared.row().withPspCall(call)))
                .flatMap(moved -> settle(conn, prepared, moved.get(0)));
    }

    /**
     * The row that records {@code outcome} for {@code before}: the answer and the event are rendered from the
     * payment the guarded change produces.
     */
    public PreparedOutcome prepare(Payment before, PaymentOutcome outcome, Map<String, String> traceHeaders) {
        Payment after = applied(before, outcome);
        StoredAnswer answer = answers.payment(after);
        OutcomeRow row = new OutcomeRow(
                outcome.paymentId(),
                outcome.status(),
                outcome.pspReference(),
                outcome.declineCode(),
                outcome.lastError(),
                eventOf(after, traceHeaders),
                answer.status(),
                answer.body(),
                null);
        return new PreparedOutcome(row, after);
    }

    /**
     * The payment once the row was written: as the change left it, or, when the change did not apply (another path
     * recorded an outcome first), as it is, with the key completed with what is there.
     */
    public Uni<Recorded> settle(SqlClient conn, PreparedOutcome prepared, boolean moved) {
        return moved
                ? Uni.createFrom().item(new Recorded(prepared.after(), true))
                : payments.findAnyMerchant(conn, prepared.row().paymentId())
                        .flatMap(current -> completeKey(conn, current).replaceWith(new Recorded(current, false)));
    }

    /** The payment as the guarded change leaves it: the columns the UPDATE of recordOutcomes sets. */
    private static Payment applied(Payment p, PaymentOutcome outcome) {
        return new Payment(
                p.id(),
                p.merchantId(),
                p.orderId(),
                p.amount(),
                p.currency(),
                outcome.status(),
                p.refundedAmount(),
                outcome.pspReference() != null ? outcome.pspReference() : p.pspReference(),
                outcome.declineCode(),
                p.createdAt(),
                p.metadata(),
                p.captureMethod(),
                p.capturedAmount());
    }

    /** The event of a payment that came to {@code p.status()}; null for a state that has none. */
    public OutboxRow eventOf(Payment p, Map<String, String> traceHeaders) {
        PaymentEvent event =
                switch (p.status()) {
                    case CAPTURED ->
                        PaymentCaptured.of(
                                p.id(),
                                p.merchantId(),
                                p.orderId(),
                                p.amount(),
                                p.captured(),
                                p.currency(),
                                p.pspReference(),
                                p.metadata());
                    case FAILED ->
                        PaymentFailed.of(
                                p.id(),
                                p.merchantId(),
                                p.orderId(),
                                p.amount(),
                                p.currency(),
                                p.declineCode(),
                                p.metadata());
                    case AUTHORIZED -> authorizationEvent(p, PaymentAuthorized::of);
                    case CANCELED -> authorizationEvent(p, PaymentCanceled::of);
                    case EXPIRED -> authorizationEvent(p, PaymentExpired::of);
                    default -> null;
                };
        return event == null ? null : json.outboxRow(Topics.PAYMENT_EVENTS, event, traceHeaders);
    }

    /** {@code of} of an authorization's events (PaymentAuthorized, PaymentCanceled, PaymentExpired): the same fields. */
    private interface AuthorizationEvent {
        PaymentEvent of(
                UUID id,
                UUID merchantId,
                String orderId,
                long amount,
                String currency,
                String pspReference,
                Map<String, String> metadata);
    }

    private static PaymentEvent authorizationEvent(Payment p, AuthorizationEvent factory) {
        return factory.of(
                p.id(), p.merchantId(), p.orderId(), p.amount(), p.currency(), p.pspReference(), p.metadata());
    }

    private Uni<Boolean> completeKey(SqlClient conn, Payment p) {
        return idempotency.complete(
                conn, RESOURCE_PAYMENT, p.id(), answers.payment(p), p.status().isFinal());
    }
}
