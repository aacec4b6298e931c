package com.payments.psp.stripe;

import static com.payments.psp.PspHttp.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.WebhookRejectedException;
import java.time.Instant;
import java.util.Locale;

/** Stripe's events and balance transactions as the port's values. */
final class StripeMapping {

    private StripeMapping() {}

    /** A verified event; types we do not act on are {@link PspEvent.Type#IGNORED}. */
    static PspEvent parse(JsonNode event) {
        String id = text(event.path("id"));
        String type = text(event.path("type"));
        JsonNode object = event.path("data").path("object");
        if (id == null || type == null || !object.isObject()) {
            throw new WebhookRejectedException("not a Stripe event");
        }
        Instant created = Instant.ofEpochSecond(event.path("created").asLong(0));
        String objectId = text(object.path("id"));
        long amount = object.path("amount").asLong(0);
        String currency = currency(object);
        JsonNode metadata = object.path("metadata");
        return switch (type) {
            case "payment_intent.succeeded" ->
                new PspEvent(
                        id,
                        PspEvent.Type.CHARGE_SUCCEEDED,
                        created,
                        text(metadata.path(StripePsp.METADATA_PAYMENT)),
                        null,
                        objectId,
                        objectId,
                        amount,
                        currency,
                        null,
                        type);
            case "payment_intent.payment_failed" -> {
                JsonNode error = object.path("last_payment_error");
                String code = text(error.path("decline_code"));
                yield new PspEvent(
                        id,
                        PspEvent.Type.CHARGE_FAILED,
                        created,
                        text(metadata.path(StripePsp.METADATA_PAYMENT)),
                        null,
                        objectId,
                        objectId,
                        amount,
                        currency,
                        code != null ? code : text(error.path("code")),
                        type);
            }
            case "refund.created", "refund.updated", "refund.failed", "charge.refund.updated" -> {
                String status = "refund.failed".equals(type) ? "failed" : text(object.path("status"));
                PspEvent.Type refundType =
                        switch (status == null ? "" : status) {
                            case "succeeded" -> PspEvent.Type.REFUND_SUCCEEDED;
                            case "pending", "requires_action" -> PspEvent.Type.REFUND_PENDING;
                            case "failed", "canceled" -> PspEvent.Type.REFUND_FAILED;
                            default -> PspEvent.Type.IGNORED;
                        };
                String reason = text(object.path("failure_reason"));
                yield new PspEvent(
                        id,
                        refundType,
                        created,
                        text(metadata.path(StripePsp.METADATA_PAYMENT)),
                        text(metadata.path(StripePsp.METADATA_REFUND)),
                        idOf(object.path("payment_intent")),
                        objectId,
                        amount,
                        currency,
                        refundType == PspEvent.Type.REFUND_FAILED ? (reason != null ? reason : status) : null,
                        type);
            }
            case "charge.dispute.created" ->
                new PspEvent(
                        id,
                        PspEvent.Type.DISPUTE_CREATED,
                        created,
                        null,
                        null,
                        idOf(object.path("payment_intent")),
                        objectId,
                        amount,
                        currency,
                        text(object.path("reason")),
                        type);
            default ->
                new PspEvent(
                        id, PspEvent.Type.IGNORED, created, null, null, null, objectId, amount, currency, null, type);
        };
    }

    /**
     * A balance transaction as a settlement line (its {@code source} expanded with its PaymentIntent); null for the
     * payout itself and for types the reconciliation does not match.
     */
    static SettlementLine settlementLine(JsonNode txn) {
        String category = text(txn.path("reporting_category"));
        JsonNode source = txn.path("source");
        String sourceId = source.isObject() ? text(source.path("id")) : text(source);
        long amount = Math.abs(txn.path("amount").asLong());
        long fee = txn.path("fee").asLong();
        String currency = currency(txn);
        Instant at = Instant.ofEpochSecond(txn.path("created").asLong());
        String paymentId = text(source.path("payment_intent").path("metadata").path(StripePsp.METADATA_PAYMENT));
        String refundId = text(source.path("metadata").path(StripePsp.METADATA_REFUND));
        if (category == null) {
            return null;
        }
        return switch (category) {
            case "charge" -> new SettlementLine(sourceId, "CHARGE", paymentId, amount, fee, currency, at);
            case "refund" -> new SettlementLine(sourceId, "REFUND", refundId, amount, fee, currency, at);
            case "refund_failure" ->
                new SettlementLine(sourceId, "REFUND_FAILURE", refundId, amount, fee, currency, at);
            case "dispute" -> new SettlementLine(sourceId, "CHARGEBACK", paymentId, amount, fee, currency, at);
            case "fee" -> new SettlementLine(text(txn.path("id")), "FEE", null, amount, fee, currency, at);
            default -> null; // payout, transfer, …: not ours to match
        };
    }

    private static String idOf(JsonNode node) {
        return node.isObject() ? text(node.path("id")) : text(node);
    }

    private static String currency(JsonNode object) {
        String currency = text(object.path("currency"));
        return currency == null ? null : currency.toUpperCase(Locale.ROOT);
    }
}
