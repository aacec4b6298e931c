package com.payments.sandbox.stripe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Reply;
import com.payments.sandbox.service.SettlementService;
import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Dispute;
import com.payments.sandbox.stripe.StripeStore.Intent;
import com.payments.sandbox.stripe.StripeStore.StripeRefund;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/** The Stripe objects of the store as Stripe's API writes them, and Stripe's paged lists of them. */
@ApplicationScoped
public class StripeJson {

    private final ObjectMapper mapper;
    private final StripeStore store;
    private final SettlementService settlements;

    public StripeJson(ObjectMapper mapper, StripeStore store, SettlementService settlements) {
        this.mapper = mapper;
        this.store = store;
        this.settlements = settlements;
    }

    Reply ok(ObjectNode json) {
        try {
            return new Reply(200, mapper.writeValueAsBytes(json), false, 0);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Stripe's list order: newest first, ties by id, descending. */
    static <T> Comparator<T> newestFirst(ToLongFunction<T> created, Function<T, String> id) {
        return Comparator.comparingLong(created).reversed().thenComparing(id, Comparator.reverseOrder());
    }

    /** Where a page {@code starting_after} the item of that id begins: 0 without one, -1 when no item has it. */
    static <T> int after(List<T> sorted, Function<T, String> id, String after) {
        if (after == null) {
            return 0;
        }
        for (int i = 0; i < sorted.size(); i++) {
            if (id.apply(sorted.get(i)).equals(after)) {
                return i + 1;
            }
        }
        return -1;
    }

    /** A Stripe list object of {@code limit} items of {@code sorted} from index {@code from}. */
    <T> ObjectNode page(
            String object, String url, List<T> sorted, int from, int limit, Function<T, ? extends JsonNode> json) {
        int to = Math.min(sorted.size(), from + limit);
        ObjectNode list = mapper.createObjectNode();
        list.put("object", object);
        list.put("url", url);
        list.put("has_more", to < sorted.size());
        ArrayNode data = list.putArray("data");
        sorted.subList(from, to).forEach(item -> data.add(json.apply(item)));
        return list;
    }

    ObjectNode intentJson(Intent i) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", i.id);
        json.put("object", "payment_intent");
        json.put("amount", i.amount);
        json.put("amount_capturable", "requires_capture".equals(i.status) ? i.amount : 0);
        json.put("amount_received", i.amountReceived);
        if (i.canceledAt != null) {
            json.put("canceled_at", i.canceledAt.getEpochSecond());
        } else {
            json.putNull("canceled_at");
        }
        if (i.cancellationReason != null) {
            json.put("cancellation_reason", i.cancellationReason);
        } else {
            json.putNull("cancellation_reason");
        }
        json.put("capture_method", i.captureMethod);
        json.put("client_secret", i.id + "_secret_sandbox");
        json.put("confirmation_method", "automatic");
        json.put("created", i.created);
        json.put("currency", i.currency);
        json.putNull("customer");
        json.putNull("description");
        if (i.declineCode != null) {
            ObjectNode error = json.putObject("last_payment_error");
            error.put("type", "card_error");
            error.put("code", "card_declined");
            error.put("decline_code", i.declineCode);
            error.put("charge", i.chargeId);
            error.put("message", StripeErrors.declineMessage(i.declineCode));
        } else {
            json.putNull("last_payment_error");
        }
        if (i.chargeId != null) {
            json.put("latest_charge", i.chargeId);
        } else {
            json.putNull("latest_charge");
        }
        json.put("livemode", false);
        ObjectNode metadata = json.putObject("metadata");
        i.metadata.forEach(metadata::put);
        if ("requires_action".equals(i.status)) {
            json.putObject("next_action").put("type", "use_stripe_sdk");
        } else {
            json.putNull("next_action");
        }
        if (i.paymentMethod != null) {
            json.put("payment_method", i.paymentMethod);
        } else {
            json.putNull("payment_method");
        }
        json.putArray("payment_method_types").add("card");
        json.putNull("processing");
        json.put("status", i.status);
        return json;
    }

    ObjectNode chargeJson(Intent i, boolean expandIntent) {
        ObjectNode json = mapper.createObjectNode();
        // the charge of an authorization is paid but not captured; a canceled one's hold is released (refunded)
        boolean captured = i.succeeded();
        boolean paid = captured || i.declineCode == null && i.chargeId != null;
        json.put("id", i.chargeId);
        json.put("object", "charge");
        json.put("amount", i.amount);
        json.put("amount_captured", i.amountReceived);
        json.put("amount_refunded", i.refunded.get());
        if (i.balanceTransaction != null) {
            json.put("balance_transaction", i.balanceTransaction);
        } else {
            json.putNull("balance_transaction");
        }
        json.put("captured", captured);
        json.put("created", i.created);
        json.put("currency", i.currency);
        json.put("disputed", i.disputeId != null);
        json.put("failure_code", paid ? null : "card_declined");
        json.put("livemode", false);
        json.putObject("metadata");
        ObjectNode outcome = json.putObject("outcome");
        outcome.put("network_status", paid ? "approved_by_network" : "declined_by_network");
        outcome.put("type", paid ? "authorized" : "issuer_declined");
        outcome.put("reason", i.declineCode);
        json.put("paid", paid);
        if (expandIntent) {
            json.set("payment_intent", intentJson(i));
        } else {
            json.put("payment_intent", i.id);
        }
        json.put("payment_method", i.paymentMethod);
        json.put("refunded", captured ? i.refunded.get() == i.amountReceived : "canceled".equals(i.status));
        json.put("status", paid ? "succeeded" : "failed");
        return json;
    }

    ObjectNode refundJson(StripeRefund r) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", r.id);
        json.put("object", "refund");
        json.put("amount", r.amount);
        json.put("balance_transaction", r.balanceTransaction);
        json.put("charge", r.intent.chargeId);
        json.put("created", r.created);
        json.put("currency", r.intent.currency);
        if (r.failureBalanceTransaction != null) {
            json.put("failure_balance_transaction", r.failureBalanceTransaction);
            json.put("failure_reason", r.failureReason);
        }
        ObjectNode metadata = json.putObject("metadata");
        r.metadata.forEach(metadata::put);
        json.put("payment_intent", r.intent.id);
        json.put("reason", r.reason);
        json.putNull("receipt_number");
        json.put("status", r.status);
        return json;
    }

    ObjectNode disputeJson(Dispute d) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", d.id());
        json.put("object", "dispute");
        json.put("amount", d.intent().amount);
        json.putArray("balance_transactions").add(balanceJson(store.balanceTransaction(d.balanceTransaction())));
        json.put("charge", d.intent().chargeId);
        json.put("created", d.created());
        json.put("currency", d.intent().currency);
        json.put("is_charge_refundable", false);
        json.put("livemode", false);
        json.putObject("metadata");
        json.put("payment_intent", d.intent().id);
        json.put("reason", "fraudulent");
        json.put("status", "needs_response");
        return json;
    }

    ObjectNode balanceJson(BalanceTxn t) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", t.id());
        json.put("object", "balance_transaction");
        json.put("amount", t.amount());
        json.put(
                "available_on",
                LocalDate.ofEpochDay(settlements.settlementDay(t.at()))
                        .atStartOfDay(ZoneOffset.UTC)
                        .toEpochSecond());
        json.put("created", t.created());
        json.put("currency", t.currency());
        json.put("description", t.description());
        json.putNull("exchange_rate");
        json.put("fee", t.fee());
        ArrayNode details = json.putArray("fee_details");
        if (t.fee() != 0) {
            ObjectNode fee = details.addObject();
            fee.put("amount", t.fee());
            fee.putNull("application");
            fee.put("currency", t.currency());
            fee.put("description", "dispute".equals(t.reportingCategory()) ? "Dispute fee" : "Stripe processing fees");
            fee.put("type", "stripe_fee");
        }
        json.put("net", t.amount() - t.fee());
        json.put("reporting_category", t.reportingCategory());
        json.put("source", t.source());
        json.put("status", "available");
        json.put("type", t.type());
        return json;
    }

    ObjectNode sourceJson(String source, boolean expandIntent) {
        if (source.startsWith("ch_")) {
            Intent intent = store.intentOfCharge(source);
            return intent == null ? null : chargeJson(intent, expandIntent);
        }
        if (source.startsWith("re_")) {
            StripeRefund refund = store.refund(source);
            if (refund == null) {
                return null;
            }
            ObjectNode json = refundJson(refund);
            if (expandIntent) {
                json.set("payment_intent", intentJson(refund.intent));
            }
            return json;
        }
        Dispute dispute = store.dispute(source);
        if (dispute == null) {
            return null;
        }
        ObjectNode json = disputeJson(dispute);
        if (expandIntent) {
            json.set("payment_intent", intentJson(dispute.intent()));
        }
        return json;
    }
}
