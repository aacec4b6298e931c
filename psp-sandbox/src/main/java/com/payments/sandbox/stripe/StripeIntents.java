package com.payments.sandbox.stripe;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.service.SettlementService;
import com.payments.sandbox.stripe.StripeIdempotency.Handled;
import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Behaviour;
import com.payments.sandbox.stripe.StripeStore.Intent;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PaymentIntents: created and confirmed in one call, captured at once or ({@code capture_method=manual}) held until
 * captured (fully or partly), canceled or expired; read back and searched (docs/psp-sandbox.md, "Stripe mode"). A
 * charge books its balance transaction when the money is taken; a {@code pm_card_createDispute} charge is disputed at
 * once.
 */
@ApplicationScoped
public class StripeIntents {

    private static final Pattern SEARCH_CLAUSE =
            Pattern.compile("\\s*(metadata\\['([^']+)'\\]|status)\\s*:\\s*'([^']*)'\\s*");

    /** Stripe's test payment methods and their card-token equivalents. */
    static final Map<String, Behaviour> TEST_METHODS = Map.ofEntries(
            Map.entry("pm_card_visa", Behaviour.SUCCEED),
            Map.entry("tok_visa", Behaviour.SUCCEED),
            Map.entry("pm_card_mastercard", Behaviour.SUCCEED),
            Map.entry("tok_mastercard", Behaviour.SUCCEED),
            Map.entry("pm_card_chargeDeclined", Behaviour.DECLINE_GENERIC),
            Map.entry("tok_chargeDeclined", Behaviour.DECLINE_GENERIC),
            Map.entry("pm_card_chargeDeclinedInsufficientFunds", Behaviour.DECLINE_INSUFFICIENT_FUNDS),
            Map.entry("tok_chargeDeclinedInsufficientFunds", Behaviour.DECLINE_INSUFFICIENT_FUNDS),
            Map.entry("pm_card_authenticationRequired", Behaviour.REQUIRE_ACTION),
            Map.entry("tok_authenticationRequired", Behaviour.REQUIRE_ACTION),
            Map.entry("pm_card_createDispute", Behaviour.DISPUTE),
            Map.entry("tok_createDispute", Behaviour.DISPUTE),
            Map.entry("pm_card_refundFail", Behaviour.REFUND_FAILS),
            Map.entry("tok_refundFail", Behaviour.REFUND_FAILS));

    private static final Set<String> INTENT_PARAMS = Set.of(
            "amount",
            "currency",
            "confirm",
            "payment_method",
            "capture_method",
            "description",
            "return_url",
            "off_session",
            "error_on_requires_action",
            "statement_descriptor_suffix");

    private final StripeStore store;
    private final StripeJson json;
    private final StripeIdempotency idempotency;
    private final StripeDisputes disputes;
    private final StripeEvents events;
    private final SandboxClock clock;
    private final PspService counters;
    private final SettlementService settlements;
    private final Duration searchDelay;
    private final Duration authorizationExpiry;

    private static final Set<String> CAPTURE_PARAMS = Set.of("amount_to_capture", "expand[]");
    private static final Set<String> CANCEL_PARAMS = Set.of("cancellation_reason", "expand[]");
    private static final Set<String> CANCEL_REASONS =
            Set.of("duplicate", "fraudulent", "requested_by_customer", "abandoned");
    private static final Set<String> CANCELABLE =
            Set.of("requires_payment_method", "requires_capture", "requires_confirmation", "requires_action");

    public StripeIntents(
            StripeStore store,
            StripeJson json,
            StripeIdempotency idempotency,
            StripeDisputes disputes,
            StripeEvents events,
            SandboxClock clock,
            PspService counters,
            SettlementService settlements,
            SandboxConfig config) {
        this.store = store;
        this.json = json;
        this.idempotency = idempotency;
        this.disputes = disputes;
        this.events = events;
        this.clock = clock;
        this.counters = counters;
        this.settlements = settlements;
        this.searchDelay = config.stripe().searchDelay();
        this.authorizationExpiry = config.authorizationExpiry();
    }

    /** {@code POST /v1/payment_intents}. */
    public Handled create(String account, String key, StripeParams params) {
        Reply invalid = validateIntent(params);
        if (invalid != null) {
            return Handled.of(invalid);
        }
        Map<String, String> metadata = params.metadata();
        String reference = metadata.getOrDefault("payment_id", key);
        if (reference != null) {
            counters.countChargeRequest(reference);
        }
        return idempotency.run(
                account, key, params.fingerprint("POST /v1/payment_intents"), () -> executeIntent(params));
    }

    private Reply validateIntent(StripeParams params) {
        for (String name : params.names()) {
            if (!INTENT_PARAMS.contains(name)
                    && !name.startsWith("metadata[")
                    && !name.startsWith("payment_method_types[")
                    && !name.startsWith("payment_method_data[")
                    && !name.startsWith("automatic_payment_methods[")
                    && !name.equals("expand[]")) {
                return StripeErrors.invalid(
                        "parameter_unknown",
                        "Received unknown parameter: " + StripeParams.safe(name),
                        StripeParams.safe(name));
            }
        }
        Reply amount = StripeParams.amountError(params.get("amount"), true);
        if (amount != null) {
            return amount;
        }
        String currency = params.get("currency");
        if (currency == null) {
            return StripeErrors.invalid("parameter_missing", "Missing required param: currency.", "currency");
        }
        if (!currency.matches("[A-Za-z]{3}")) {
            return StripeErrors.invalid("parameter_invalid_string", "Invalid currency.", "currency");
        }
        Reply units = StripeAmounts.currencyError(currency);
        if (units == null) {
            units = StripeAmounts.amountError(Long.parseLong(params.get("amount")), currency);
        }
        if (units != null) {
            return units;
        }
        String capture = params.get("capture_method");
        if (capture != null
                && !capture.equals("automatic")
                && !capture.equals("automatic_async")
                && !capture.equals("manual")) {
            return StripeErrors.invalid(
                    "parameter_invalid_string",
                    "Invalid capture_method: must be one of automatic, automatic_async or manual.",
                    "capture_method");
        }
        if (params.metadata().size() > 50) {
            return StripeErrors.invalid("parameter_invalid_empty", "Metadata has more than 50 keys.", "metadata");
        }
        String method = paymentMethod(params);
        if ("true".equals(params.get("confirm"))) {
            if (method == null) {
                return StripeErrors.invalid(
                        "parameter_missing",
                        "You must provide a payment_method to confirm this PaymentIntent.",
                        "payment_method");
            }
            if (!TEST_METHODS.containsKey(method)) {
                // The value is never echoed: it could be card data sent by mistake.
                return StripeErrors.invalid(
                        "resource_missing", "No such PaymentMethod; use a test payment method.", "payment_method");
            }
        }
        return null;
    }
    /** {@code payment_method}, or the token of {@code payment_method_data[card][token]}. */
    private static String paymentMethod(StripeParams params) {
        String method = params.get("payment_method");
        return method != null ? method : params.get("payment_method_data[card][token]");
    }

    private Reply executeIntent(StripeParams params) {
        long amount = Long.parseLong(params.get("amount"));
        String currency = params.get("currency").toLowerCase(Locale.ROOT);
        String method = paymentMethod(params);
        Map<String, String> metadata = params.metadata();
        Instant now = clock.now();
        boolean manual = "manual".equals(params.get("capture_method"));
        String captureMethod = manual ? "manual" : "automatic";
        Instant expiresAt = manual ? now.plus(authorizationExpiry) : null;
        if (!"true".equals(params.get("confirm"))) {
            Intent intent = new Intent(
                    PspService.newId("pi_"),
                    null,
                    amount,
                    currency,
                    method,
                    null,
                    metadata,
                    now,
                    method == null ? "requires_payment_method" : "requires_confirmation",
                    null,
                    captureMethod,
                    expiresAt);
            store.add(intent);
            return json.ok(json.intentJson(intent));
        }
        Behaviour behaviour = TEST_METHODS.get(method);
        String pm = method.startsWith("pm_") ? method : PspService.newId("pm_");
        String declineCode =
                switch (behaviour) {
                    case DECLINE_GENERIC -> "generic_decline";
                    case DECLINE_INSUFFICIENT_FUNDS -> "insufficient_funds";
                    default -> null;
                };
        String status = declineCode != null
                ? "requires_payment_method"
                : behaviour == Behaviour.REQUIRE_ACTION ? "requires_action" : manual ? "requires_capture" : "succeeded";
        String chargeId = behaviour == Behaviour.REQUIRE_ACTION ? null : PspService.newId("ch_");
        Intent intent = new Intent(
                PspService.newId("pi_"),
                chargeId,
                amount,
                currency,
                pm,
                behaviour,
                metadata,
                now,
                status,
                declineCode,
                captureMethod,
                expiresAt);
        store.add(intent);
        String reference = metadata.getOrDefault("payment_id", intent.id);
        if (declineCode != null) {
            ObjectNode failed = json.intentJson(intent);
            events.publish("payment_intent.payment_failed", reference, failed);
            return StripeErrors.cardDeclined(declineCode, chargeId, failed);
        }
        if (intent.succeeded()) {
            charged(intent, amount, now, reference);
        } else if ("requires_capture".equals(intent.status)) {
            events.publish("payment_intent.amount_capturable_updated", reference, json.intentJson(intent));
        }
        return json.ok(json.intentJson(intent));
    }

    /** The money of {@code intent} taken: its balance transaction, the counters and {@code payment_intent.succeeded}. */
    private void charged(Intent intent, long amount, Instant now, String reference) {
        long fee = StripeAmounts.fee(settlements.fee("CHARGE", amount), intent.currency);
        BalanceTxn txn = store.book(
                "charge", "charge", amount, fee, intent.currency, now, intent.chargeId, "Payment " + intent.id);
        intent.balanceTransaction = txn.id();
        if (intent.expiresAt == null) {
            counters.countChargeMovement(reference);
        } else {
            counters.countCapture(reference, amount);
        }
        events.publish("payment_intent.succeeded", reference, json.intentJson(intent));
        if (intent.behaviour == Behaviour.DISPUTE) {
            disputes.open(intent, reference);
        }
    }

    /**
     * {@code POST /v1/payment_intents/{id}/capture}: {@code amount_to_capture} (default: all of it) of a {@code
     * requires_capture} intent, once; the rest is released. Another status is 400 {@code
     * payment_intent_unexpected_state} with the intent in the error; more than the capturable amount 400 {@code
     * amount_too_large}.
     */
    public Handled capture(String account, String key, String id, StripeParams params) {
        Intent intent = store.intent(id);
        if (intent == null) {
            return Handled.of(StripeErrors.missing("payment_intent", id));
        }
        Reply invalid = unknownParam(params, CAPTURE_PARAMS);
        if (invalid == null && params.get("amount_to_capture") != null) {
            invalid = StripeParams.amountError(params.get("amount_to_capture"), false);
            if (invalid == null) {
                invalid = StripeAmounts.amountError(Long.parseLong(params.get("amount_to_capture")), intent.currency);
            }
        }
        if (invalid != null) {
            return Handled.of(invalid);
        }
        String reference = intent.metadata.getOrDefault("payment_id", intent.id);
        counters.countCaptureRequest(reference);
        return idempotency.run(account, key, params.fingerprint("POST /v1/payment_intents/" + id + "/capture"), () -> {
            Instant now = clock.now();
            String text = params.get("amount_to_capture");
            long amount = text == null ? intent.amount : Long.parseLong(text);
            intent.expireIfDue(now);
            if ("requires_capture".equals(intent.status) && amount > intent.amount) {
                return StripeErrors.invalid(
                        "amount_too_large",
                        "The amount to capture is greater than the amount capturable.",
                        "amount_to_capture");
            }
            if (!intent.move(now, Set.of("requires_capture"), "succeeded", amount, null)) {
                return StripeErrors.unexpectedState(
                        "This PaymentIntent could not be captured because it has a status of " + intent.status
                                + ". Only a PaymentIntent with one of the following statuses may be captured:"
                                + " requires_capture.",
                        json.intentJson(intent));
            }
            charged(intent, amount, now, reference);
            return json.ok(json.intentJson(intent));
        });
    }

    /**
     * {@code POST /v1/payment_intents/{id}/cancel} with an optional {@code cancellation_reason}: a {@code
     * requires_capture} intent's hold is released. A succeeded or canceled intent is 400 {@code
     * payment_intent_unexpected_state} with the intent in the error.
     */
    public Handled cancel(String account, String key, String id, StripeParams params) {
        Intent intent = store.intent(id);
        if (intent == null) {
            return Handled.of(StripeErrors.missing("payment_intent", id));
        }
        Reply invalid = unknownParam(params, CANCEL_PARAMS);
        String reason = params.get("cancellation_reason");
        if (invalid == null && reason != null && !CANCEL_REASONS.contains(reason)) {
            invalid = StripeErrors.invalid(
                    "parameter_invalid_string",
                    "Invalid cancellation_reason: must be one of duplicate, fraudulent, requested_by_customer or"
                            + " abandoned.",
                    "cancellation_reason");
        }
        if (invalid != null) {
            return Handled.of(invalid);
        }
        String reference = intent.metadata.getOrDefault("payment_id", intent.id);
        counters.countVoidRequest(reference);
        return idempotency.run(account, key, params.fingerprint("POST /v1/payment_intents/" + id + "/cancel"), () -> {
            Instant now = clock.now();
            boolean held = "requires_capture".equals(intent.status);
            if (!intent.move(now, CANCELABLE, "canceled", 0, reason)) {
                return StripeErrors.unexpectedState(
                        "You cannot cancel this PaymentIntent because it has a status of " + intent.status
                                + ". Only a PaymentIntent with one of the following statuses may be canceled:"
                                + " requires_payment_method, requires_capture, requires_confirmation,"
                                + " requires_action, processing.",
                        json.intentJson(intent));
            }
            if (held) {
                counters.countVoid(reference);
            }
            events.publish("payment_intent.canceled", reference, json.intentJson(intent));
            return json.ok(json.intentJson(intent));
        });
    }

    private static Reply unknownParam(StripeParams params, Set<String> known) {
        for (String name : params.names()) {
            if (!known.contains(name)) {
                return StripeErrors.invalid(
                        "parameter_unknown",
                        "Received unknown parameter: " + StripeParams.safe(name),
                        StripeParams.safe(name));
            }
        }
        return null;
    }

    /** {@code GET /v1/payment_intents/{id}}. */
    public Reply retrieve(String id) {
        Intent intent = store.intent(id);
        if (intent == null) {
            return StripeErrors.missing("payment_intent", id);
        }
        intent.expireIfDue(clock.now());
        return json.ok(json.intentJson(intent));
    }

    /**
     * {@code GET /v1/payment_intents/search}: clauses {@code metadata['k']:'v'} and {@code status:'s'} joined by
     * {@code AND}. Like Stripe's, the index lags: an intent is found only {@code psp.stripe.search-delay} after it
     * was written, on the sandbox clock (freeze it to hold an intent out of the index).
     */
    public Reply search(StripeParams params) {
        String query = params.get("query");
        if (query == null || query.isBlank()) {
            return StripeErrors.invalid("parameter_missing", "Missing required param: query.", "query");
        }
        List<Predicate<Intent>> clauses = new ArrayList<>();
        for (String clause : query.split("(?i)\\s+AND\\s+")) {
            Matcher m = SEARCH_CLAUSE.matcher(clause);
            if (!m.matches()) {
                return StripeErrors.invalid(
                        "parameter_invalid_string",
                        "The sandbox's search supports metadata['key']:'value' and status:'value' joined by AND.",
                        "query");
            }
            String field = m.group(2);
            String value = m.group(3);
            clauses.add(field != null ? i -> value.equals(i.metadata.get(field)) : i -> value.equals(i.status));
        }
        int limit = StripeParams.limit(params.get("limit"));
        if (limit < 0) {
            return StripeParams.limitError();
        }
        Instant now = clock.now();
        List<Intent> found = new ArrayList<>();
        for (Intent intent : store.intents()) {
            intent.expireIfDue(now);
            if (!now.isBefore(intent.at.plus(searchDelay)) && clauses.stream().allMatch(c -> c.test(intent))) {
                found.add(intent);
            }
        }
        found.sort(StripeJson.newestFirst(i -> i.created, i -> i.id));
        ObjectNode result = json.page("search_result", "/v1/payment_intents/search", found, 0, limit, json::intentJson);
        result.putNull("next_page");
        result.put("total_count", found.size());
        return json.ok(result);
    }
}
