package com.payments.psp.stripe;

import static com.payments.psp.PspHttp.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.WebhookRejectedException;
import com.payments.psp.settlement.StripeItemizedReport;
import java.time.Instant;
import java.util.Locale;

/** Stripe's events and balance transactions as the port's values, in ISO minor units ({@link StripeCurrencies}). */
final class StripeMapping {

    private StripeMapping() {}

    /** A verified event; types we do not act on are {@link PspEvent.Type#IGNORED}. */
    static PspEvent parse(JsonNode event) {
        String type = text(event.path("type"));
        JsonNode object = event.path("data").path("object");
        if (text(event.path("id")) == null || type == null || !object.isObject()) {
            throw new WebhookRejectedException(WebhookRejectedException.Reason.NOT_AN_EVENT, "not a Stripe event");
        }
        String paymentId = text(object.path("metadata").path(StripePsp.METADATA_PAYMENT));
        String refundId = text(object.path("metadata").path(StripePsp.METADATA_REFUND));
        String objectId = text(object.path("id"));
        return switch (type) {
            case "payment_intent.succeeded" ->
                event(event, PspEvent.Type.CHARGE_SUCCEEDED, paymentId, null, objectId, null);
            case "payment_intent.payment_failed" -> {
                JsonNode error = object.path("last_payment_error");
                String code = text(error.path("decline_code"));
                yield event(
                        event,
                        PspEvent.Type.CHARGE_FAILED,
                        paymentId,
                        null,
                        objectId,
                        code != null ? code : text(error.path("code")));
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
                yield event(
                        event,
                        refundType,
                        paymentId,
                        refundId,
                        idOf(object.path("payment_intent")),
                        refundType == PspEvent.Type.REFUND_FAILED ? (reason != null ? reason : status) : null);
            }
            case "charge.dispute.created" ->
                event(
                        event,
                        PspEvent.Type.DISPUTE_CREATED,
                        null,
                        null,
                        idOf(object.path("payment_intent")),
                        text(object.path("reason")));
            default -> event(event, PspEvent.Type.IGNORED, null, null, null, null);
        };
    }

    /**
     * The event's fields that every type shares (id, time, the object's id, amount and currency) and the given. The
     * amount of an event we act on is converted to ISO minor units; one without an exact value there cannot be about
     * our money and is refused rather than read in other units.
     */
    private static PspEvent event(
            JsonNode event, PspEvent.Type type, String paymentId, String refundId, String pspChargeId, String code) {
        JsonNode object = event.path("data").path("object");
        // a manual-capture PaymentIntent that succeeded took amount_received (a partial capture), not its amount
        boolean captured = "manual".equals(text(object.path("capture_method")))
                && "payment_intent.succeeded".equals(text(event.path("type")));
        long amount = object.path(captured ? "amount_received" : "amount").asLong(0);
        String currency = currency(object);
        if (type != PspEvent.Type.IGNORED && amount != 0) {
            try {
                amount = StripeCurrencies.toIso(amount, currency);
            } catch (ArithmeticException e) {
                throw new WebhookRejectedException(
                        WebhookRejectedException.Reason.NOT_AN_EVENT,
                        "the event's amount has no exact value in ISO minor units of its currency");
            }
        }
        return new PspEvent(
                text(event.path("id")),
                type,
                Instant.ofEpochSecond(event.path("created").asLong(0)),
                paymentId,
                refundId,
                pspChargeId,
                text(object.path("id")),
                amount,
                currency,
                code,
                text(event.path("type")));
    }

    /**
     * A balance transaction as a settlement line (its {@code source} expanded with its PaymentIntent); null for the
     * payout itself and for categories the reconciliation does not match ({@link StripeItemizedReport#lineType}, the
     * same mapping as the report's). A charge's PSP reference is its PaymentIntent's id, which is what we store as the
     * payment's {@code psp_reference}; a dispute's is the dispute, a refund's the refund, a fee's the transaction.
     */
    static SettlementLine settlementLine(JsonNode txn) {
        String type = StripeItemizedReport.lineType(text(txn.path("reporting_category")));
        if (type == null) {
            return null;
        }
        JsonNode source = txn.path("source");
        String sourceId = source.isObject() ? text(source.path("id")) : text(source);
        String currency = currency(txn);
        long signedAmount = iso(txn, "amount", currency);
        long amount = Math.abs(signedAmount);
        long fee = iso(txn, "fee", currency);
        Instant at = Instant.ofEpochSecond(txn.path("created").asLong());
        JsonNode intent = source.path("payment_intent");
        String paymentId = text(intent.path("metadata").path(StripePsp.METADATA_PAYMENT));
        String refundId = text(source.path("metadata").path(StripePsp.METADATA_REFUND));
        String intentId = idOf(intent);
        return switch (type) {
            case "CHARGE" ->
                new SettlementLine(intentId != null ? intentId : sourceId, type, paymentId, amount, fee, currency, at);
            case "CHARGEBACK" -> new SettlementLine(sourceId, type, paymentId, amount, fee, currency, at);
            case "REFUND", "REFUND_FAILURE" -> new SettlementLine(sourceId, type, refundId, amount, fee, currency, at);
            // A fee debits the balance (negative); a credit stays negative here, which the reconciler refuses.
            default -> new SettlementLine(text(txn.path("id")), type, null, -signedAmount, fee, currency, at);
        };
    }

    /** A balance transaction's amount field in ISO minor units; one without an exact value there fails the read. */
    private static long iso(JsonNode txn, String field, String currency) {
        try {
            return StripeCurrencies.toIso(txn.path(field).asLong(), currency);
        } catch (ArithmeticException e) {
            throw new IllegalStateException("Stripe balance transaction " + text(txn.path("id")) + ": its " + field
                    + " has no exact value in ISO minor units of " + currency);
        }
    }

    private static String idOf(JsonNode node) {
        return node.isObject() ? text(node.path("id")) : text(node);
    }

    private static String currency(JsonNode object) {
        String currency = text(object.path("currency"));
        return currency == null ? null : currency.toUpperCase(Locale.ROOT);
    }
}
