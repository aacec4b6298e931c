package com.payments.sandbox.stripe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Faults;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.service.SettlementService;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Stripe-compatible mode, in memory: PaymentIntents created and confirmed in one call with automatic capture,
 * refunds, disputes, balance transactions and their payouts, with Stripe's idempotency layer (docs/psp-sandbox.md,
 * "Stripe mode"). It shares the clock, the fault knobs, the per-reference counters, the fee and settlement day of the
 * settlement files, and the webhook delivery of the sandbox protocol.
 */
@ApplicationScoped
public class StripeService {

    /** The API version the sandbox answers as when the request names none. */
    public static final String API_VERSION = "2025-03-31.basil";

    static final long MAX_AMOUNT = 99_999_999L;
    private static final Pattern SEARCH_CLAUSE =
            Pattern.compile("\\s*(metadata\\['([^']+)'\\]|status)\\s*:\\s*'([^']*)'\\s*");

    /** What a test payment method does. */
    enum Behaviour {
        SUCCEED,
        DECLINE_GENERIC,
        DECLINE_INSUFFICIENT_FUNDS,
        REQUIRE_ACTION,
        DISPUTE,
        REFUND_FAILS
    }

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
    private static final Set<String> REFUND_PARAMS = Set.of("payment_intent", "charge", "amount", "reason");

    /** A PaymentIntent and its one charge. */
    static final class Intent {
        final String id;
        final String chargeId;
        final long amount;
        final String currency;
        final String paymentMethod;
        final Behaviour behaviour;
        final Map<String, String> metadata;
        final long created;
        final Instant at;
        final String status;
        final String declineCode;
        final AtomicLong refunded = new AtomicLong();
        volatile String disputeId;
        volatile String balanceTransaction;

        Intent(
                String id,
                String chargeId,
                long amount,
                String currency,
                String paymentMethod,
                Behaviour behaviour,
                Map<String, String> metadata,
                Instant at,
                String status,
                String declineCode) {
            this.id = id;
            this.chargeId = chargeId;
            this.amount = amount;
            this.currency = currency;
            this.paymentMethod = paymentMethod;
            this.behaviour = behaviour;
            this.metadata = metadata;
            this.created = at.getEpochSecond();
            this.at = at;
            this.status = status;
            this.declineCode = declineCode;
        }

        boolean succeeded() {
            return "succeeded".equals(status);
        }

        /** Reserves {@code value} of what is left to refund; false when it would exceed the amount. */
        boolean tryRefund(long value) {
            long before = refunded.getAndUpdate(current -> current + value > amount ? current : current + value);
            return before + value <= amount;
        }
    }

    /** A refund; its status moves from pending to failed for {@code pm_card_refundFail}. */
    static final class StripeRefund {
        final String id;
        final Intent intent;
        final long amount;
        final Map<String, String> metadata;
        final String reason;
        final long created;
        volatile String status;
        volatile String failureReason;
        volatile String balanceTransaction;
        volatile String failureBalanceTransaction;

        StripeRefund(String id, Intent intent, long amount, Map<String, String> metadata, String reason, Instant at) {
            this.id = id;
            this.intent = intent;
            this.amount = amount;
            this.metadata = metadata;
            this.reason = reason;
            this.created = at.getEpochSecond();
        }
    }

    /** A dispute opened on a charge of {@code pm_card_createDispute}. */
    record Dispute(String id, Intent intent, long created, String balanceTransaction) {}

    /** A balance transaction; {@code source} is a charge, refund or dispute id. */
    record BalanceTxn(
            String id,
            String type,
            String reportingCategory,
            long amount,
            long fee,
            String currency,
            Instant at,
            String source,
            String description) {
        long created() {
            return at.getEpochSecond();
        }
    }

    /** The stored answer of an idempotency key; {@code executing} until the original request's answer leaves. */
    static final class Stored {
        final String fingerprint;
        final Instant at;
        volatile Reply reply;
        volatile boolean executing = true;

        Stored(String fingerprint, Instant at) {
            this.fingerprint = fingerprint;
            this.at = at;
        }
    }

    /**
     * An answer and what to do once the request's processing time (the latency knob) has passed: the idempotency key
     * stops being "in use" then.
     */
    public record Handled(Reply reply, Runnable executed) {
        static Handled of(Reply reply) {
            return new Handled(reply, () -> {});
        }
    }

    private final ConcurrentHashMap<String, Stored> keys = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Intent> intents = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Intent> intentsByCharge = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, StripeRefund> refunds = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Dispute> disputes = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<BalanceTxn> balance = new ConcurrentLinkedQueue<>();

    private final ObjectMapper mapper;
    private final SandboxClock clock;
    private final FaultSettings faults;
    private final PspService counters;
    private final SettlementService settlements;
    private final StripeEvents events;
    private final Vertx vertx;
    private final long timeoutDelayMs;
    private final Duration keyTtl;
    private final Duration searchDelay;
    private final long refundFailureDelayMs;
    private final long disputeFee;
    private final long discrepancySeed;

    public StripeService(
            ObjectMapper mapper,
            SandboxClock clock,
            FaultSettings faults,
            PspService counters,
            SettlementService settlements,
            StripeEvents events,
            Vertx vertx,
            SandboxConfig config) {
        this.mapper = mapper;
        this.clock = clock;
        this.faults = faults;
        this.counters = counters;
        this.settlements = settlements;
        this.events = events;
        this.vertx = vertx;
        this.timeoutDelayMs = config.timeoutDelay().toMillis();
        this.keyTtl = config.stripe().idempotencyKeyTtl();
        this.searchDelay = config.stripe().searchDelay();
        this.refundFailureDelayMs =
                Math.max(1, config.stripe().refundFailureDelay().toMillis());
        this.disputeFee = config.stripe().disputeFee();
        this.discrepancySeed = config.settlement().discrepancies().seed();
    }

    // ---------------------------------------------------------------- faults shared by every call

    /** The 429 knob, checked before anything else of a call; null when it does not fire. */
    Reply rateLimited() {
        return FaultSettings.roll(faults.current().rateLimitRate()) ? StripeErrors.rateLimited() : null;
    }

    /** The 429 and 500 knobs for reading calls, which record nothing; null when neither fires. */
    Reply readFault() {
        Reply limited = rateLimited();
        if (limited != null) {
            return limited;
        }
        return FaultSettings.roll(faults.current().errorRate()) ? StripeErrors.apiError() : null;
    }

    // ---------------------------------------------------------------- PaymentIntents

    /** {@code POST /v1/payment_intents}. */
    public Handled createIntent(String account, String key, StripeParams params) {
        Reply invalid = validateIntent(params);
        if (invalid != null) {
            return Handled.of(invalid);
        }
        Map<String, String> metadata = params.metadata();
        String reference = metadata.getOrDefault("payment_id", key);
        if (reference != null) {
            counters.countChargeRequest(reference);
        }
        return idempotent(account, key, params.fingerprint("POST /v1/payment_intents"), () -> executeIntent(params));
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
                        "parameter_unknown", "Received unknown parameter: " + safe(name), safe(name));
            }
        }
        Reply amount = validateAmount(params.get("amount"), true);
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
        if (capture != null && !capture.equals("automatic") && !capture.equals("automatic_async")) {
            return StripeErrors.invalid(
                    "parameter_invalid_string",
                    "The sandbox supports capture_method=automatic only.",
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

    private static Reply validateAmount(String text, boolean required) {
        if (text == null) {
            return required
                    ? StripeErrors.invalid("parameter_missing", "Missing required param: amount.", "amount")
                    : null;
        }
        long value;
        try {
            value = Long.parseLong(text);
        } catch (NumberFormatException e) {
            return StripeErrors.invalid("parameter_invalid_integer", "Invalid integer: amount.", "amount");
        }
        if (value < 1) {
            return StripeErrors.invalid("amount_too_small", "Amount must be at least 1 minor unit.", "amount");
        }
        if (value > MAX_AMOUNT) {
            return StripeErrors.invalid("amount_too_large", "Amount must be no more than 99999999.", "amount");
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
        String currency = params.get("currency").toLowerCase(java.util.Locale.ROOT);
        String method = paymentMethod(params);
        Map<String, String> metadata = params.metadata();
        Instant now = clock.now();
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
                    null);
            intents.put(intent.id, intent);
            return ok(intentJson(intent));
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
                : behaviour == Behaviour.REQUIRE_ACTION ? "requires_action" : "succeeded";
        String chargeId = behaviour == Behaviour.REQUIRE_ACTION ? null : PspService.newId("ch_");
        Intent intent = new Intent(
                PspService.newId("pi_"), chargeId, amount, currency, pm, behaviour, metadata, now, status, declineCode);
        intents.put(intent.id, intent);
        if (chargeId != null) {
            intentsByCharge.put(chargeId, intent);
        }
        String reference = metadata.getOrDefault("payment_id", intent.id);
        if (declineCode != null) {
            ObjectNode json = intentJson(intent);
            events.publish("payment_intent.payment_failed", reference, json);
            return StripeErrors.cardDeclined(declineCode, chargeId, json);
        }
        if (intent.succeeded()) {
            long fee = StripeAmounts.fee(settlements.fee("CHARGE", amount), currency);
            BalanceTxn txn = book("charge", "charge", amount, fee, currency, now, chargeId, "Payment " + intent.id);
            intent.balanceTransaction = txn.id();
            counters.countChargeMovement(reference);
            events.publish("payment_intent.succeeded", reference, intentJson(intent));
            if (behaviour == Behaviour.DISPUTE) {
                openDispute(intent, reference);
            }
        }
        return ok(intentJson(intent));
    }

    private void openDispute(Intent intent, String reference) {
        Instant now = clock.now();
        String id = PspService.newId("dp_");
        BalanceTxn txn = book(
                "adjustment",
                "dispute",
                -intent.amount,
                disputeFee,
                intent.currency,
                now,
                id,
                "Chargeback withdrawal for " + intent.chargeId);
        Dispute dispute = new Dispute(id, intent, now.getEpochSecond(), txn.id());
        disputes.put(id, dispute);
        intent.disputeId = id;
        events.publish("charge.dispute.created", reference, disputeJson(dispute));
    }

    /** {@code GET /v1/payment_intents/{id}}. */
    public Reply retrieveIntent(String id) {
        Intent intent = id == null ? null : intents.get(id);
        return intent == null ? StripeErrors.missing("payment_intent", id) : ok(intentJson(intent));
    }

    /**
     * {@code GET /v1/payment_intents/search}: clauses {@code metadata['k']:'v'} and {@code status:'s'} joined by
     * {@code AND}. Like Stripe's, the index lags: an intent is found only {@code psp.stripe.search-delay} after it
     * was written, on the sandbox clock (freeze it to hold an intent out of the index).
     */
    public Reply searchIntents(StripeParams params) {
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
        int limit = limit(params.get("limit"));
        if (limit < 0) {
            return StripeErrors.invalid("parameter_invalid_integer", "limit must be between 1 and 100.", "limit");
        }
        Instant now = clock.now();
        List<Intent> found = new ArrayList<>();
        for (Intent intent : intents.values()) {
            if (!now.isBefore(intent.at.plus(searchDelay)) && clauses.stream().allMatch(c -> c.test(intent))) {
                found.add(intent);
            }
        }
        found.sort(newestFirst(i -> i.created, i -> i.id));
        ObjectNode result = page("search_result", "/v1/payment_intents/search", found, 0, limit, this::intentJson);
        result.putNull("next_page");
        result.put("total_count", found.size());
        return ok(result);
    }

    // ---------------------------------------------------------------- refunds

    /** {@code POST /v1/refunds} of a PaymentIntent ({@code payment_intent}) or its charge ({@code charge}). */
    public Handled createRefund(String account, String key, StripeParams params) {
        for (String name : params.names()) {
            if (!REFUND_PARAMS.contains(name) && !name.startsWith("metadata[") && !name.equals("expand[]")) {
                return Handled.of(StripeErrors.invalid(
                        "parameter_unknown", "Received unknown parameter: " + safe(name), safe(name)));
            }
        }
        Reply amount = validateAmount(params.get("amount"), false);
        if (amount != null) {
            return Handled.of(amount);
        }
        String intentId = params.get("payment_intent");
        String chargeId = params.get("charge");
        if (intentId == null && chargeId == null) {
            return Handled.of(StripeErrors.invalid(
                    "parameter_missing", "One of payment_intent or charge is required.", "payment_intent"));
        }
        Intent intent = intentId != null ? intents.get(intentId) : intentsByCharge.get(chargeId);
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
        return idempotent(
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
                ? intent.amount - intent.refunded.get()
                : Long.parseLong(params.get("amount"));
        if (amount <= 0 || intent.refunded.get() >= intent.amount) {
            return StripeErrors.invalid("charge_already_refunded", "Charge has already been refunded.", null);
        }
        if (!intent.tryRefund(amount)) {
            return StripeErrors.invalid(
                    "amount_too_large", "Refund amount is greater than the unrefunded amount on the charge.", "amount");
        }
        Instant now = clock.now();
        StripeRefund refund =
                new StripeRefund(PspService.newId("re_"), intent, amount, params.metadata(), params.get("reason"), now);
        BalanceTxn txn = book("refund", "refund", -amount, 0, intent.currency, now, refund.id, "REFUND FOR CHARGE");
        refund.balanceTransaction = txn.id();
        if (intent.behaviour == Behaviour.REFUND_FAILS) {
            refund.status = "pending";
            vertx.setTimer(refundFailureDelayMs, id -> failRefund(refund, reference));
        } else {
            refund.status = "succeeded";
            counters.countRefundMovement(reference);
        }
        refunds.put(refund.id, refund);
        events.publish("refund.created", reference, refundJson(refund));
        return ok(refundJson(refund));
    }

    /** A refund that failed after it was accepted: the money comes back to the balance, the charge is refundable again. */
    private void failRefund(StripeRefund refund, String reference) {
        refund.failureReason = "expired_or_canceled_card";
        BalanceTxn txn = book(
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
        ObjectNode json = refundJson(refund);
        events.publish("refund.updated", reference, json);
        events.publish("refund.failed", reference, json);
    }

    /**
     * {@code GET /v1/refunds?payment_intent=…} (or {@code charge=…}): the refunds of one charge, newest first, paged
     * with {@code limit} and {@code starting_after} as Stripe pages its lists.
     */
    public Reply listRefunds(StripeParams params) {
        int limit = limit(params.get("limit"));
        if (limit < 0) {
            return StripeErrors.invalid("parameter_invalid_integer", "limit must be between 1 and 100.", "limit");
        }
        String intentId = params.get("payment_intent");
        String chargeId = params.get("charge");
        List<StripeRefund> found = new ArrayList<>();
        for (StripeRefund refund : refunds.values()) {
            if ((intentId == null || intentId.equals(refund.intent.id))
                    && (chargeId == null || chargeId.equals(refund.intent.chargeId))) {
                found.add(refund);
            }
        }
        found.sort(newestFirst(r -> r.created, r -> r.id));
        int from = after(found, r -> r.id, params.get("starting_after"));
        if (from < 0) {
            return StripeErrors.invalid("resource_missing", "No such refund.", "starting_after");
        }
        return ok(page("list", "/v1/refunds", found, from, limit, this::refundJson));
    }

    /** {@code GET /v1/refunds/{id}}. */
    public Reply retrieveRefund(String id) {
        StripeRefund refund = id == null ? null : refunds.get(id);
        return refund == null ? StripeErrors.missing("refund", id) : ok(refundJson(refund));
    }

    // ---------------------------------------------------------------- balance transactions, payouts, report

    /**
     * {@code GET /v1/balance_transactions}, newest first, paged with {@code limit} and {@code starting_after}, filtered
     * by {@code payout}, {@code created[gte|gt|lte|lt]} and {@code type}; {@code expand[]=data.source} embeds each
     * source, {@code data.source.payment_intent} also its PaymentIntent.
     */
    public Reply balanceTransactions(StripeParams params) {
        int limit = limit(params.get("limit"));
        if (limit < 0) {
            return StripeErrors.invalid("parameter_invalid_integer", "limit must be between 1 and 100.", "limit");
        }
        Predicate<BalanceTxn> filter = t -> true;
        String payout = params.get("payout");
        if (payout != null) {
            LocalDate day = payoutDay(payout);
            if (day == null) {
                return StripeErrors.invalid("resource_missing", "No such payout.", "payout");
            }
            long epochDay = day.toEpochDay();
            filter = filter.and(t -> settlements.settlementDay(t.at()) == epochDay);
        }
        for (String op : List.of("gte", "gt", "lte", "lt")) {
            String text = params.get("created[" + op + "]");
            if (text == null) {
                continue;
            }
            Long parsed = parseLong(text);
            if (parsed == null) {
                return StripeErrors.invalid(
                        "parameter_invalid_integer", "Invalid integer: created[" + op + "].", "created");
            }
            long bound = parsed;
            Predicate<BalanceTxn> range =
                    switch (op) {
                        case "gte" -> t -> t.created() >= bound;
                        case "gt" -> t -> t.created() > bound;
                        case "lte" -> t -> t.created() <= bound;
                        default -> t -> t.created() < bound;
                    };
            filter = filter.and(range);
        }
        String type = params.get("type");
        if (type != null) {
            filter = filter.and(t -> t.type().equals(type));
        }
        List<BalanceTxn> all = new ArrayList<>();
        for (BalanceTxn txn : listed()) {
            if (filter.test(txn)) {
                all.add(txn);
            }
        }
        all.sort(NEWEST_FIRST);
        int from = after(all, BalanceTxn::id, params.get("starting_after"));
        if (from < 0) {
            return StripeErrors.invalid("resource_missing", "No such balance_transaction.", "starting_after");
        }
        List<String> expand = params.all("expand[]");
        boolean source = expand.contains("data.source") || expand.contains("data.source.payment_intent");
        boolean sourceIntent = expand.contains("data.source.payment_intent");
        return ok(page("list", "/v1/balance_transactions", all, from, limit, txn -> {
            ObjectNode json = balanceJson(txn);
            ObjectNode src = source ? sourceJson(txn.source(), sourceIntent) : null;
            if (src != null) {
                json.set("source", src);
            }
            return json;
        }));
    }

    static final Comparator<BalanceTxn> NEWEST_FIRST = newestFirst(BalanceTxn::created, BalanceTxn::id);

    /** Stripe's list order: newest first, ties by id, descending. */
    static <T> Comparator<T> newestFirst(ToLongFunction<T> created, Function<T, String> id) {
        return Comparator.comparingLong(created).reversed().thenComparing(id, Comparator.reverseOrder());
    }

    /** Where a page {@code starting_after} the item of that id begins: 0 without one, -1 when no item has it. */
    private static <T> int after(List<T> sorted, Function<T, String> id, String after) {
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
    private <T> ObjectNode page(
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

    /** The sandbox pays out each settlement day once: {@code po_sbx_<yyyymmdd>}. */
    public static String payoutId(LocalDate day) {
        return "po_sbx_" + day.toString().replace("-", "");
    }

    static LocalDate payoutDay(String payout) {
        if (payout == null || !payout.matches("po_sbx_\\d{8}")) {
            return null;
        }
        String d = payout.substring(7);
        try {
            return LocalDate.parse(d.substring(0, 4) + '-' + d.substring(4, 6) + '-' + d.substring(6));
        } catch (java.time.DateTimeException e) {
            return null;
        }
    }

    /**
     * What the discrepancy knobs changed in the balance transactions of a settlement day, as {@code GET
     * /test/settlements/{date}/discrepancies} reports them for the settlement files: DROPPED, AMOUNT_CHANGED
     * (amounts as positive minor units) or PHANTOM_CHARGE, with our reference from the metadata.
     */
    public List<SettlementService.Injected> injected(LocalDate day) {
        Map<String, BalanceTxn> listedById = new java.util.LinkedHashMap<>();
        for (BalanceTxn txn : listed()) {
            if (settlements.settlementDay(txn.at()) == day.toEpochDay()) {
                listedById.put(txn.id(), txn);
            }
        }
        List<SettlementService.Injected> injected = new ArrayList<>();
        for (BalanceTxn txn : balance) {
            if (settlements.settlementDay(txn.at()) != day.toEpochDay()) {
                continue;
            }
            BalanceTxn shown = listedById.remove(txn.id());
            if (shown == null || shown.amount() != txn.amount()) {
                Intent intent = intentOf(txn.source());
                String reference = txn.source().startsWith("re_")
                        ? refundMetadata(txn.source()).get("refund_id")
                        : intent == null ? null : intent.metadata.get("payment_id");
                injected.add(new SettlementService.Injected(
                        shown == null ? "DROPPED" : "AMOUNT_CHANGED",
                        intent == null ? txn.source() : intent.id,
                        reference,
                        Math.abs(txn.amount()),
                        shown == null ? 0 : Math.abs(shown.amount())));
            }
        }
        for (BalanceTxn phantom : listedById.values()) {
            injected.add(new SettlementService.Injected(
                    "PHANTOM_CHARGE", phantom.source(), null, 0, Math.abs(phantom.amount())));
        }
        return injected;
    }

    /** The balance transactions of a payout, oldest first, for the itemized payout reconciliation report. */
    List<BalanceTxn> payoutItems(LocalDate day) {
        List<BalanceTxn> items = new ArrayList<>();
        for (BalanceTxn txn : listed()) {
            if (settlements.settlementDay(txn.at()) == day.toEpochDay()) {
                items.add(txn);
            }
        }
        items.sort(NEWEST_FIRST.reversed());
        return items;
    }

    /**
     * The balance transactions as the API lists them: with the settlement files' discrepancy knobs ({@code
     * settlementDrop}, {@code settlementAmountMismatch}, {@code settlementPhantom}) applied per settlement day, the
     * transactions chosen by a generator seeded with the seed and the day, so that listing twice gives the same answer.
     * A changed amount keeps its id; a phantom is a {@code charge} of a charge that never happened ({@code
     * ch_phantom_…}, no PaymentIntent).
     */
    private List<BalanceTxn> listed() {
        Faults f = faults.current();
        int drop = f.settlementDrop();
        int mismatch = f.settlementAmountMismatch();
        int phantom = f.settlementPhantom();
        if (drop == 0 && mismatch == 0 && phantom == 0) {
            return new ArrayList<>(balance);
        }
        java.util.TreeMap<Long, List<BalanceTxn>> days = new java.util.TreeMap<>();
        for (BalanceTxn txn : balance) {
            days.computeIfAbsent(settlements.settlementDay(txn.at()), d -> new ArrayList<>())
                    .add(txn);
        }
        List<BalanceTxn> out = new ArrayList<>();
        for (Map.Entry<Long, List<BalanceTxn>> day : days.entrySet()) {
            List<BalanceTxn> items = day.getValue();
            items.sort(NEWEST_FIRST.reversed());
            java.util.Random random = new java.util.Random(discrepancySeed * 1_000_003L + day.getKey());
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < items.size(); i++) {
                order.add(i);
            }
            java.util.Collections.shuffle(order, random);
            Set<Integer> dropped = new java.util.HashSet<>(order.subList(0, Math.min(drop, order.size())));
            int changed = Math.min(order.size(), dropped.size() + mismatch);
            Map<Integer, Long> amounts = new java.util.HashMap<>();
            for (int i = dropped.size(); i < changed; i++) {
                long amount = items.get(order.get(i)).amount();
                long delta = 1 + random.nextInt(1_000);
                amounts.put(order.get(i), amount < 0 ? amount - delta : amount + delta);
            }
            for (int i = 0; i < items.size(); i++) {
                BalanceTxn txn = items.get(i);
                if (dropped.contains(i)) {
                    continue;
                }
                Long amount = amounts.get(i);
                out.add(
                        amount == null
                                ? txn
                                : new BalanceTxn(
                                        txn.id(),
                                        txn.type(),
                                        txn.reportingCategory(),
                                        amount,
                                        txn.fee(),
                                        txn.currency(),
                                        txn.at(),
                                        txn.source(),
                                        txn.description()));
            }
            Instant noon = LocalDate.ofEpochDay(day.getKey())
                    .atStartOfDay(java.time.ZoneOffset.UTC)
                    .toInstant()
                    .plus(Duration.ofHours(12));
            for (int i = 0; i < phantom; i++) {
                long amount = 100 + random.nextInt(100_000);
                String suffix = day.getKey() + "_" + i;
                out.add(new BalanceTxn(
                        "txn_phantom_" + suffix,
                        "charge",
                        "charge",
                        amount,
                        settlements.fee("CHARGE", amount),
                        "eur",
                        noon.plusSeconds(i),
                        "ch_phantom_" + suffix,
                        "Phantom payment"));
            }
        }
        return out;
    }

    /** The PaymentIntent behind a charge, refund or dispute id; null when unknown. */
    Intent intentOf(String source) {
        if (source.startsWith("ch_")) {
            return intentsByCharge.get(source);
        }
        if (source.startsWith("re_")) {
            StripeRefund refund = refunds.get(source);
            return refund == null ? null : refund.intent;
        }
        Dispute dispute = disputes.get(source);
        return dispute == null ? null : dispute.intent();
    }

    Map<String, String> refundMetadata(String source) {
        StripeRefund refund = refunds.get(source);
        return refund == null ? Map.of() : refund.metadata;
    }

    /** Forgets every intent, refund, dispute, balance transaction and idempotency key. */
    public void reset() {
        keys.clear();
        intents.clear();
        intentsByCharge.clear();
        refunds.clear();
        disputes.clear();
        balance.clear();
    }

    // ---------------------------------------------------------------- idempotency

    /**
     * Stripe's idempotency layer: the first request of a key runs and its answer is kept for {@code
     * psp.stripe.idempotency-key-ttl} on the sandbox clock; the same key with the same parameters replays it (with
     * {@code Idempotent-Replayed: true}), with other parameters it is a 400 {@code idempotency_error}, and while the
     * first request still runs a 409 {@code idempotency_key_in_use}. Neither error is kept. Without a key every
     * request runs.
     */
    private Handled idempotent(String account, String key, String fingerprint, java.util.function.Supplier<Reply> run) {
        Faults f = faults.current();
        if (key == null) {
            if (FaultSettings.roll(f.notReceivedRate())) {
                return Handled.of(StripeErrors.timeout().delayed(timeoutDelayMs));
            }
            Reply reply = FaultSettings.roll(f.errorRate()) ? StripeErrors.apiError() : run.get();
            return Handled.of(lost(reply, f));
        }
        Instant now = clock.now();
        String scoped = account + '\n' + key;
        Stored before = keys.get(scoped);
        if ((before == null || expired(before, now)) && FaultSettings.roll(f.notReceivedRate())) {
            // Lost on the way: nothing recorded, the key stays unused.
            return Handled.of(StripeErrors.timeout().delayed(timeoutDelayMs));
        }
        Stored fresh = new Stored(fingerprint, now);
        Stored held = keys.compute(scoped, (k, old) -> old == null || expired(old, now) ? fresh : old);
        if (held != fresh) {
            if (held.executing) {
                return Handled.of(StripeErrors.keyInUse());
            }
            if (!held.fingerprint.equals(fingerprint)) {
                return Handled.of(StripeErrors.keyReused(key));
            }
            return Handled.of(held.reply.asReplay());
        }
        // Stripe keeps 500s too: the same key answers the same 500 until the key expires.
        fresh.reply = FaultSettings.roll(f.errorRate()) ? StripeErrors.apiError() : run.get();
        return new Handled(lost(fresh.reply, f), () -> fresh.executing = false);
    }

    private boolean expired(Stored stored, Instant now) {
        return !stored.at.plus(keyTtl).isAfter(now);
    }

    /** The timeout knob: processed and kept, but the answer is held back (a lost response). */
    private Reply lost(Reply reply, Faults f) {
        return FaultSettings.roll(f.timeoutRate()) ? reply.delayed(timeoutDelayMs) : reply;
    }

    // ---------------------------------------------------------------- JSON

    private BalanceTxn book(
            String type, String category, long amount, long fee, String currency, Instant at, String source, String d) {
        BalanceTxn txn = new BalanceTxn(PspService.newId("txn_"), type, category, amount, fee, currency, at, source, d);
        balance.add(txn);
        return txn;
    }

    ObjectNode intentJson(Intent i) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", i.id);
        json.put("object", "payment_intent");
        json.put("amount", i.amount);
        json.put("amount_capturable", 0);
        json.put("amount_received", i.succeeded() ? i.amount : 0);
        json.putNull("canceled_at");
        json.putNull("cancellation_reason");
        json.put("capture_method", "automatic");
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
        boolean paid = i.succeeded();
        json.put("id", i.chargeId);
        json.put("object", "charge");
        json.put("amount", i.amount);
        json.put("amount_captured", paid ? i.amount : 0);
        json.put("amount_refunded", i.refunded.get());
        if (i.balanceTransaction != null) {
            json.put("balance_transaction", i.balanceTransaction);
        } else {
            json.putNull("balance_transaction");
        }
        json.put("captured", paid);
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
        json.put("refunded", i.refunded.get() == i.amount);
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
        json.putArray("balance_transactions").add(balanceJson(find(d.balanceTransaction())));
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

    private BalanceTxn find(String id) {
        for (BalanceTxn txn : balance) {
            if (txn.id().equals(id)) {
                return txn;
            }
        }
        throw new IllegalStateException("no balance transaction " + id);
    }

    ObjectNode balanceJson(BalanceTxn t) {
        ObjectNode json = mapper.createObjectNode();
        json.put("id", t.id());
        json.put("object", "balance_transaction");
        json.put("amount", t.amount());
        json.put(
                "available_on",
                LocalDate.ofEpochDay(settlements.settlementDay(t.at()))
                        .atStartOfDay(java.time.ZoneOffset.UTC)
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

    private ObjectNode sourceJson(String source, boolean expandIntent) {
        if (source.startsWith("ch_")) {
            Intent intent = intentsByCharge.get(source);
            return intent == null ? null : chargeJson(intent, expandIntent);
        }
        if (source.startsWith("re_")) {
            StripeRefund refund = refunds.get(source);
            if (refund == null) {
                return null;
            }
            ObjectNode json = refundJson(refund);
            if (expandIntent) {
                json.set("payment_intent", intentJson(refund.intent));
            }
            return json;
        }
        Dispute dispute = disputes.get(source);
        if (dispute == null) {
            return null;
        }
        ObjectNode json = disputeJson(dispute);
        if (expandIntent) {
            json.set("payment_intent", intentJson(dispute.intent()));
        }
        return json;
    }

    private Reply ok(ObjectNode json) {
        try {
            return new Reply(200, mapper.writeValueAsBytes(json), false, 0);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Long parseLong(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** 10 when absent, -1 when not an integer in 1..100. */
    private static int limit(String text) {
        if (text == null) {
            return 10;
        }
        try {
            int value = Integer.parseInt(text);
            return value >= 1 && value <= 100 ? value : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A parameter name as it may be echoed: printable ASCII, at most 64 characters. */
    private static String safe(String text) {
        String cut = text.length() > 64 ? text.substring(0, 64) : text;
        return new String(cut.getBytes(StandardCharsets.US_ASCII), StandardCharsets.US_ASCII)
                .replaceAll("[^\\x20-\\x7e]", "?");
    }
}
