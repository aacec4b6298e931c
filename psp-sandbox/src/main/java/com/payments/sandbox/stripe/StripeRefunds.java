package com.payments.sandbox.stripe;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.stripe.StripeIdempotency.Handled;
import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Behaviour;
import com.payments.sandbox.stripe.StripeStore.Intent;
import com.payments.sandbox.stripe.StripeStore.StripeRefund;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Refunds of a PaymentIntent's charge: created (partial or full, never more than was charged), listed and read back;
 * a refund of a {@code pm_card_refundFail} charge fails {@code psp.stripe.refund-failure-delay} after it was accepted.
 */
@ApplicationScoped
public class StripeRefunds {

    private static final Set<String> REFUND_PARAMS = Set.of("payment_intent", "charge", "amount", "reason");

    private final StripeStore store;
    private final StripeJson json;
    private final StripeIdempotency idempotency;
    private final StripeEvents events;
    private final SandboxClock clock;
    private final PspService counters;
    private final Vertx vertx;
    private final long refundFailureDelayMs;

    public StripeRefunds(
            StripeStore store,
            StripeJson json,
            StripeIdempotency idempotency,
            StripeEvents events,
            SandboxClock clock,
            PspService counters,
            Vertx vertx,
            SandboxConfig config) {
        this.store = store;
        this.json = json;
        this.idempotency = idempotency;
        this.events = events;
        this.clock = clock;
        this.counters = counters;
        this.vertx = vertx;
        this.refundFailureDelayMs =
                Math.max(1, config.stripe().refundFailureDelay().toMillis());
    }

    /** {@code POST /v1/refunds} of a PaymentIntent ({@code payment_intent}) or its charge ({@code charge}). */
    public Handled create(String account, String key, StripeParams params) {
        for (String name : params.names()) {
            if (!REFUND_PARAMS.contains(name) && !name.startsWith("metadata[") && !name.equals("expand[]")) {
                return Handled.of(StripeErrors.invalid(
                        "parameter_unknown",
                        "Received unknown parameter: " + StripeParams.safe(name),
                        StripeParams.safe(name)));
            }
        }
        Reply amount = StripeParams.amountError(params.get("amount"), false);
        if (amount != null) {
            return Handled.of(amount);
        }
        String intentId = params.get("payment_intent");
        String chargeId = params.get("charge");
        if (intentId == null && chargeId == null) {
            return Handled.of(StripeErrors.invalid(
                    "parameter_missing", "One of payment_intent or charge is required.", "payment_intent"));
        }
        Intent intent = intentId != null ? store.intent(intentId) : store.intentOfCharge(chargeId);
        if (intent == null) {
            return Handled.of(
                    intentId != null
                            ? StripeErrors.invalid("resource_missing", "No such payment_intent.", "payment_intent")
                            : StripeErrors.invalid("resource_missing", "No such charge.", "charge"));
        }
        Reply units = params.get("amount") == null
                ? null
                : StripeAmounts.amountError(Long.parseLong(params.get("amount")), intent.currency);
        if (units != null) {
            return Handled.of(units);
        }
        Map<String, String> metadata = params.metadata();
        String reference = metadata.getOrDefault("refund_id", key);
        if (reference != null) {
            counters.countRefundRequest(reference);
        }
        return idempotency.run(
                account, key, params.fingerprint("POST /v1/refunds"), () -> executeRefund(intent, params, reference));
    }

    private Reply executeRefund(Intent intent, StripeParams params, String reference) {
        if (!intent.succeeded()) {
            return StripeErrors.invalid(
                    "payment_intent_unexpected_state",
                    "This PaymentIntent does not have a successful charge to refund.",
                    "payment_intent");
        }
        long amount = params.get("amount") == null
                ? intent.amountReceived - intent.refunded.get()
                : Long.parseLong(params.get("amount"));
        if (amount <= 0 || intent.refunded.get() >= intent.amountReceived) {
            return StripeErrors.invalid("charge_already_refunded", "Charge has already been refunded.", null);
        }
        if (!intent.tryRefund(amount)) {
            return StripeErrors.invalid(
                    "amount_too_large", "Refund amount is greater than the unrefunded amount on the charge.", "amount");
        }
        Instant now = clock.now();
        StripeRefund refund =
                new StripeRefund(PspService.newId("re_"), intent, amount, params.metadata(), params.get("reason"), now);
        BalanceTxn txn =
                store.book("refund", "refund", -amount, 0, intent.currency, now, refund.id, "REFUND FOR CHARGE");
        refund.balanceTransaction = txn.id();
        if (intent.behaviour == Behaviour.REFUND_FAILS) {
            refund.status = "pending";
            vertx.setTimer(refundFailureDelayMs, id -> failRefund(refund, reference));
        } else {
            refund.status = "succeeded";
            counters.countRefundMovement(reference);
        }
        store.add(refund);
        events.publish("refund.created", reference, json.refundJson(refund));
        return json.ok(json.refundJson(refund));
    }

    /** A refund that failed after it was accepted: the money comes back to the balance, the charge is refundable again. */
    private void failRefund(StripeRefund refund, String reference) {
        refund.failureReason = "expired_or_canceled_card";
        BalanceTxn txn = store.book(
                "refund_failure",
                "refund_failure",
                refund.amount,
                0,
                refund.intent.currency,
                clock.now(),
                refund.id,
                "REFUND FAILURE");
        refund.failureBalanceTransaction = txn.id();
        refund.intent.refunded.addAndGet(-refund.amount);
        refund.status = "failed";
        ObjectNode failed = json.refundJson(refund);
        events.publish("refund.updated", reference, failed);
        events.publish("refund.failed", reference, failed);
    }

    /**
     * {@code GET /v1/refunds?payment_intent=…} (or {@code charge=…}): the refunds of one charge, newest first, paged
     * with {@code limit} and {@code starting_after} as Stripe pages its lists.
     */
    public Reply list(StripeParams params) {
        int limit = StripeParams.limit(params.get("limit"));
        if (limit < 0) {
            return StripeParams.limitError();
        }
        String intentId = params.get("payment_intent");
        String chargeId = params.get("charge");
        List<StripeRefund> found = new ArrayList<>();
        for (StripeRefund refund : store.refunds()) {
            if ((intentId == null || intentId.equals(refund.intent.id))
                    && (chargeId == null || chargeId.equals(refund.intent.chargeId))) {
                found.add(refund);
            }
        }
        found.sort(StripeJson.newestFirst(r -> r.created, r -> r.id));
        int from = StripeJson.after(found, r -> r.id, params.get("starting_after"));
        if (from < 0) {
            return StripeErrors.invalid("resource_missing", "No such refund.", "starting_after");
        }
        return json.ok(json.page("list", "/v1/refunds", found, from, limit, json::refundJson));
    }

    /** {@code GET /v1/refunds/{id}}. */
    public Reply retrieve(String id) {
        StripeRefund refund = store.refund(id);
        return refund == null ? StripeErrors.missing("refund", id) : json.ok(json.refundJson(refund));
    }
}
