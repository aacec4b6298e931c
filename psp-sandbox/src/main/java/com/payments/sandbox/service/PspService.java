package com.payments.sandbox.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.sandbox.Capture;
import com.payments.sandbox.CaptureRequest;
import com.payments.sandbox.Charge;
import com.payments.sandbox.ChargeRequest;
import com.payments.sandbox.ChargeView;
import com.payments.sandbox.Counters;
import com.payments.sandbox.Faults;
import com.payments.sandbox.Refund;
import com.payments.sandbox.RefundRequest;
import com.payments.sandbox.RefundView;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Charges, authorizations with their capture or void, and refunds, in memory. Idempotency: the first request of a
 * key runs inside {@link ConcurrentHashMap#computeIfAbsent}, so concurrent requests with one key make exactly one money
 * movement; the others get the stored answer (or 422 when their body differs).
 */
@ApplicationScoped
public class PspService {

    public static final String TOK_VISA = "tok_visa";
    public static final String TOK_MASTERCARD = "tok_mastercard";
    public static final String TOK_CHARGE_DECLINED = "tok_chargeDeclined";
    public static final String TOK_INSUFFICIENT_FUNDS = "tok_insufficientFunds";
    public static final String TOK_TIMEOUT_CAPTURED = "tok_timeoutCaptured";
    public static final String TOK_TIMEOUT_NOT_RECEIVED = "tok_timeoutNotReceived";
    public static final String TOK_REFUND_FAILS = "tok_refundFails";
    public static final String TOK_CAPTURE_TIMEOUT = "tok_captureTimeout";

    static final long MAX_AMOUNT = 1_000_000_000_000L;

    private static final Reply MISMATCH =
            Reply.error(422, "idempotency_key_reused", "This Idempotency-Key was used with a different request body");
    private static final Reply INJECTED_ERROR =
            Reply.error(500, "internal_error", "Injected server error (psp.faults.error-rate)");
    private static final Reply NOT_RECEIVED = Reply.error(504, "timeout", "The request timed out");

    /** The stored outcome of an idempotency key; {@code owner} is the request that produced it. */
    private record Stored(String fingerprint, Object owner, Reply reply, Object entity) {}

    private final ConcurrentHashMap<String, Stored> keys = new ConcurrentHashMap<>(1 << 20);
    private final ConcurrentHashMap<String, RefState> refs = new ConcurrentHashMap<>(1 << 20);
    private final ConcurrentHashMap<String, Charge> chargesById = new ConcurrentHashMap<>(1 << 20);
    private final Set<String> notReceivedOnce = ConcurrentHashMap.newKeySet();

    private final ObjectMapper mapper;
    private final SandboxClock clock;
    private final FaultSettings faults;
    private final SettlementService settlements;
    private final WebhookService webhooks;
    private final long timeoutDelayMs;
    private final Duration authorizationExpiry;

    public PspService(
            ObjectMapper mapper,
            SandboxClock clock,
            FaultSettings faults,
            SettlementService settlements,
            WebhookService webhooks,
            SandboxConfig config) {
        this.mapper = mapper;
        this.clock = clock;
        this.faults = faults;
        this.settlements = settlements;
        this.webhooks = webhooks;
        this.timeoutDelayMs = config.timeoutDelay().toMillis();
        this.authorizationExpiry = config.authorizationExpiry();
    }

    // ---------------------------------------------------------------- charges

    public Reply charge(String key, ChargeRequest req) {
        return charge(key, req, false);
    }

    /** {@code POST /v1/authorizations}: a charge whose money is held until captured, voided or expired. */
    public Reply authorize(String key, ChargeRequest req) {
        return charge(key, req, true);
    }

    private Reply charge(String key, ChargeRequest req, boolean authorization) {
        Reply invalid = validate(key, req);
        if (invalid != null) {
            return invalid;
        }
        Faults f = faults.current();
        RefState ref = refs.computeIfAbsent(req.reference(), RefState::new);
        RefState.CHARGE_REQUESTS.incrementAndGet(ref);
        if (FaultSettings.roll(f.errorRate())) {
            return INJECTED_ERROR;
        }
        String fingerprint = (authorization ? "authorize|" : "charge|")
                + req.reference()
                + '|'
                + req.amount()
                + '|'
                + req.currency()
                + '|'
                + req.source();
        Stored stored = keys.get(key);
        if (stored == null) {
            if ((TOK_TIMEOUT_NOT_RECEIVED.equals(req.source()) && notReceivedOnce.add(key))
                    || FaultSettings.roll(f.notReceivedRate())) {
                return NOT_RECEIVED.delayed(timeoutDelayMs);
            }
            stored = keys.computeIfAbsent(key, k -> executeCharge(fingerprint, req, authorization));
        }
        if (!stored.fingerprint().equals(fingerprint)) {
            return MISMATCH;
        }
        if (stored.owner() != req) {
            return stored.reply().asReplay();
        }
        Charge charge = (Charge) stored.entity();
        if (ref.charge == null) {
            ref.charge = charge;
        }
        if (charge.authorization() && "authorized".equals(charge.status())) {
            webhooks.publish(
                    "charge.authorized", charge.reference, stored.reply().body());
        } else if (charge.succeeded()) {
            RefState.CHARGE_MOVEMENTS.incrementAndGet(ref);
            settlements.record(charge);
            webhooks.publish("charge.succeeded", charge.reference, charge.json);
        } else {
            webhooks.publish("charge.failed", charge.reference, stored.reply().body());
        }
        if (TOK_TIMEOUT_CAPTURED.equals(req.source()) || FaultSettings.roll(f.timeoutRate())) {
            return stored.reply().delayed(timeoutDelayMs);
        }
        return stored.reply();
    }

    /** Runs inside computeIfAbsent: creates the charge and makes it findable by id, nothing else. */
    private Stored executeCharge(String fingerprint, ChargeRequest req, boolean authorization) {
        String source = req.source();
        String declineCode =
                switch (source) {
                    case TOK_CHARGE_DECLINED -> "card_declined";
                    case TOK_INSUFFICIENT_FUNDS -> "insufficient_funds";
                    default -> null;
                };
        String status = declineCode != null ? "declined" : authorization ? "authorized" : "succeeded";
        String id = newId("ch_");
        Instant now = clock.now();
        byte[] json = authorization
                ? null
                : toJson(new ChargeView(
                        id,
                        req.reference(),
                        status,
                        declineCode,
                        req.amount(),
                        req.currency(),
                        now.toString(),
                        null,
                        null,
                        null,
                        null));
        Charge charge = new Charge(
                id,
                req.reference(),
                req.amount(),
                req.currency(),
                status,
                declineCode,
                TOK_REFUND_FAILS.equals(source),
                now,
                authorization ? now.plus(authorizationExpiry) : null,
                TOK_CAPTURE_TIMEOUT.equals(source),
                json);
        chargesById.put(id, charge);
        return new Stored(fingerprint, req, new Reply(200, json(charge, now), false, 0), charge);
    }

    /** The charge as the API answers it now: an authorization's state as of {@code now}. */
    private byte[] json(Charge charge, Instant now) {
        if (!charge.authorization()) {
            return charge.json;
        }
        Charge.State state = charge.state(now);
        return toJson(new ChargeView(
                charge.id,
                charge.reference,
                state.status(),
                charge.declineCode,
                charge.amount,
                charge.currency,
                charge.created.toString(),
                "manual",
                state.captured(),
                state.cancellationReason(),
                charge.expiresAt.toString()));
    }

    // ---------------------------------------------------------------- captures and voids

    /** What a capture or void that ran did: the capture it booked (null for a void), whether it moved the charge. */
    private record Settled(Capture capture, boolean moved) {}

    /**
     * {@code POST /v1/charges/{id}/capture}: takes {@code amount} (at most the authorized amount) of an authorization,
     * once: the move from authorized to succeeded is one compare-and-set, so of concurrent captures and voids of one
     * authorization (whatever their keys) exactly one wins; the others get a 422 that is kept under their key.
     */
    public Reply capture(String key, String chargeId, CaptureRequest req) {
        if (!printable(key)) {
            return INVALID_KEY;
        }
        if (req == null || req.amount() == null || req.amount() < 1 || req.amount() > MAX_AMOUNT) {
            return Reply.error(400, "invalid_amount", "amount must be an integer between 1 and 10^12");
        }
        return settle(key, chargeId, "capture|" + chargeId + '|' + req.amount(), RefState.CAPTURE_REQUESTS, charge -> {
            Instant now = clock.now();
            while (true) {
                Charge.State state = charge.state(now);
                Reply refused = refusal(charge, state);
                if (refused != null) {
                    return new Stored(null, null, refused, null);
                }
                if (req.amount() > charge.amount) {
                    return new Stored(
                            null,
                            null,
                            Reply.error(422, "amount_exceeds_authorized", "The capture exceeds the authorized amount"),
                            null);
                }
                if (charge.move(state, new Charge.State("succeeded", req.amount(), null, now))) {
                    Capture capture = new Capture(charge.id, charge.reference, req.amount(), charge.currency, now);
                    return new Stored(null, null, ok(charge, now), new Settled(capture, true));
                }
            }
        });
    }

    /**
     * {@code POST /v1/charges/{id}/void}: releases an authorization. An authorization already canceled (voided or
     * expired) answers canceled again; a captured one 422 {@code charge_already_captured}.
     */
    public Reply voidAuthorization(String key, String chargeId) {
        if (!printable(key)) {
            return INVALID_KEY;
        }
        return settle(key, chargeId, "void|" + chargeId, RefState.VOID_REQUESTS, charge -> {
            Instant now = clock.now();
            while (true) {
                Charge.State state = charge.state(now);
                if ("canceled".equals(state.status())) {
                    return new Stored(null, null, ok(charge, now), new Settled(null, false));
                }
                Reply refused = refusal(charge, state);
                if (refused != null) {
                    return new Stored(null, null, refused, null);
                }
                if (charge.move(state, new Charge.State("canceled", 0, "voided", now))) {
                    return new Stored(null, null, ok(charge, now), new Settled(null, true));
                }
            }
        });
    }

    /** Why a capture or void of this charge in this state is refused; null when it may go ahead. */
    private static Reply refusal(Charge charge, Charge.State state) {
        if (!charge.authorization() || "declined".equals(state.status())) {
            return Reply.error(422, "charge_not_authorized", "The charge is not an authorization");
        }
        return switch (state.status()) {
            case "succeeded" -> Reply.error(422, "charge_already_captured", "The authorization was already captured");
            case "canceled" ->
                "expired".equals(state.cancellationReason())
                        ? Reply.error(422, "authorization_expired", "The authorization expired uncaptured")
                        : Reply.error(422, "authorization_canceled", "The authorization was voided");
            default -> null;
        };
    }

    private Reply ok(Charge charge, Instant now) {
        return new Reply(200, json(charge, now), false, 0);
    }

    /**
     * The idempotent envelope of a capture or void: the charge must exist (404 otherwise, nothing kept), the key's
     * first request runs {@code run} inside computeIfAbsent, its answer is kept under the key; the request that ran it
     * books what it did.
     */
    private Reply settle(
            String key,
            String chargeId,
            String fingerprint,
            AtomicIntegerFieldUpdater<RefState> requests,
            java.util.function.Function<Charge, Stored> run) {
        Charge charge = chargeId == null ? null : chargesById.get(chargeId);
        if (charge == null) {
            return Reply.error(404, "charge_not_found", "No such charge");
        }
        Faults f = faults.current();
        RefState ref = refs.computeIfAbsent(charge.reference, RefState::new);
        requests.incrementAndGet(ref);
        if (FaultSettings.roll(f.errorRate())) {
            return INJECTED_ERROR;
        }
        Object owner = new Object();
        Stored stored = keys.get(key);
        if (stored == null) {
            if (FaultSettings.roll(f.notReceivedRate())) {
                return NOT_RECEIVED.delayed(timeoutDelayMs);
            }
            stored = keys.computeIfAbsent(key, k -> {
                Stored ran = run.apply(charge);
                return new Stored(fingerprint, owner, ran.reply(), ran.entity());
            });
        }
        if (!stored.fingerprint().equals(fingerprint)) {
            return MISMATCH;
        }
        if (stored.owner() != owner) {
            return stored.reply().asReplay();
        }
        if (stored.entity() instanceof Settled settled && settled.moved()) {
            if (settled.capture() != null) {
                RefState.CHARGE_MOVEMENTS.incrementAndGet(ref);
                RefState.CAPTURED_AMOUNT.addAndGet(ref, settled.capture().amount());
                settlements.record(settled.capture());
                webhooks.publish(
                        "charge.captured", charge.reference, stored.reply().body());
            } else {
                RefState.VOID_MOVEMENTS.incrementAndGet(ref);
                webhooks.publish(
                        "charge.canceled", charge.reference, stored.reply().body());
            }
        }
        if (charge.settleAnswersLost || FaultSettings.roll(f.timeoutRate())) {
            return stored.reply().delayed(timeoutDelayMs);
        }
        return stored.reply();
    }

    // ---------------------------------------------------------------- refunds

    public Reply refund(String key, RefundRequest req) {
        Reply invalid = validate(key, req);
        if (invalid != null) {
            return invalid;
        }
        Charge charge = chargesById.get(req.charge());
        if (charge == null) {
            return Reply.error(404, "charge_not_found", "No such charge");
        }
        Faults f = faults.current();
        RefState ref = refs.computeIfAbsent(req.reference(), RefState::new);
        RefState.REFUND_REQUESTS.incrementAndGet(ref);
        if (FaultSettings.roll(f.errorRate())) {
            return INJECTED_ERROR;
        }
        String fingerprint = "refund|" + req.reference() + '|' + req.charge() + '|' + req.amount();
        Stored stored = keys.get(key);
        if (stored == null) {
            if (FaultSettings.roll(f.notReceivedRate())) {
                return NOT_RECEIVED.delayed(timeoutDelayMs);
            }
            stored = keys.computeIfAbsent(key, k -> executeRefund(fingerprint, req, charge));
        }
        if (!stored.fingerprint().equals(fingerprint)) {
            return MISMATCH;
        }
        if (stored.owner() != req) {
            return stored.reply().asReplay();
        }
        if (stored.entity() instanceof Refund refund) {
            if (refund.succeeded()) {
                RefState.REFUND_MOVEMENTS.incrementAndGet(ref);
                settlements.record(refund);
                webhooks.publish(
                        "refund.succeeded", refund.reference(), stored.reply().body());
            } else {
                webhooks.publish(
                        "refund.failed", refund.reference(), stored.reply().body());
            }
        }
        if (FaultSettings.roll(f.timeoutRate())) {
            return stored.reply().delayed(timeoutDelayMs);
        }
        return stored.reply();
    }

    private Stored executeRefund(String fingerprint, RefundRequest req, Charge charge) {
        if (!charge.succeeded()) {
            return new Stored(
                    fingerprint,
                    req,
                    Reply.error(422, "charge_not_refundable", "Only succeeded charges can be refunded"),
                    null);
        }
        long amount = req.amount();
        boolean ok;
        if (charge.refundsFail) {
            ok = false;
            if (amount > charge.amount - charge.refunded()) {
                return exceeds(fingerprint, req);
            }
        } else {
            if (!charge.tryRefund(amount)) {
                return exceeds(fingerprint, req);
            }
            ok = true;
        }
        Instant now = clock.now();
        String status = ok ? "succeeded" : "failed";
        Refund refund = new Refund(newId("re_"), req.reference(), charge.id, amount, charge.currency, status, now);
        byte[] json =
                toJson(new RefundView(refund.id(), refund.reference(), status, charge.id, amount, now.toString()));
        refs.computeIfAbsent(req.reference(), RefState::new).setRefundJson(json);
        return new Stored(fingerprint, req, new Reply(200, json, false, 0), refund);
    }

    private static Stored exceeds(String fingerprint, RefundRequest req) {
        return new Stored(
                fingerprint,
                req,
                Reply.error(422, "amount_exceeds_refundable", "The refund exceeds what is left of the charge"),
                null);
    }

    // ---------------------------------------------------------------- lookups, counters

    public Reply chargeByReference(String reference) {
        if (FaultSettings.roll(faults.current().errorRate())) {
            return INJECTED_ERROR;
        }
        RefState ref = reference == null ? null : refs.get(reference);
        Charge charge = ref == null ? null : ref.charge;
        return charge == null
                ? Reply.error(404, "charge_not_found", "No charge with this reference")
                : ok(charge, clock.now());
    }

    public Reply refundByReference(String reference) {
        if (FaultSettings.roll(faults.current().errorRate())) {
            return INJECTED_ERROR;
        }
        RefState ref = reference == null ? null : refs.get(reference);
        return ref == null || ref.refundJson == null
                ? Reply.error(404, "refund_not_found", "No refund with this reference")
                : new Reply(200, ref.refundJson, false, 0);
    }

    public Counters counters(String reference) {
        RefState ref = refs.get(reference);
        return ref == null
                ? new Counters(reference, 0, 0, 0, 0, 0, 0, 0, 0)
                : new Counters(
                        reference,
                        ref.chargeRequests,
                        ref.chargeMovements,
                        ref.refundRequests,
                        ref.refundMovements,
                        ref.captureRequests,
                        ref.capturedAmount,
                        ref.voidRequests,
                        ref.voidMovements);
    }

    /** The Stripe mode counts into the same per-reference counters (see {@link #counters}). */
    public void countCaptureRequest(String reference) {
        RefState.CAPTURE_REQUESTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    /** A capture of {@code amount}: a charge movement too. */
    public void countCapture(String reference, long amount) {
        RefState ref = refs.computeIfAbsent(reference, RefState::new);
        RefState.CHARGE_MOVEMENTS.incrementAndGet(ref);
        RefState.CAPTURED_AMOUNT.addAndGet(ref, amount);
    }

    public void countVoidRequest(String reference) {
        RefState.VOID_REQUESTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    public void countVoid(String reference) {
        RefState.VOID_MOVEMENTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    public void countChargeRequest(String reference) {
        RefState.CHARGE_REQUESTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    public void countChargeMovement(String reference) {
        RefState.CHARGE_MOVEMENTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    public void countRefundRequest(String reference) {
        RefState.REFUND_REQUESTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    public void countRefundMovement(String reference) {
        RefState.REFUND_MOVEMENTS.incrementAndGet(refs.computeIfAbsent(reference, RefState::new));
    }

    /** Forgets every charge, refund, idempotency key and counter. */
    public void reset() {
        keys.clear();
        refs.clear();
        chargesById.clear();
        notReceivedOnce.clear();
    }

    // ---------------------------------------------------------------- helpers

    private Reply validate(String key, ChargeRequest req) {
        Reply bad = validateEnvelope(key, req, req == null ? null : req.reference());
        if (bad != null) {
            return bad;
        }
        if (req.amount() == null || req.amount() < 1 || req.amount() > MAX_AMOUNT) {
            return Reply.error(400, "invalid_amount", "amount must be an integer between 1 and 10^12");
        }
        if (!currency(req.currency())) {
            return Reply.error(400, "invalid_currency", "currency must be an ISO 4217 code");
        }
        String source = req.source();
        if (source == null || source.isEmpty()) {
            return Reply.error(400, "missing_source", "source is required");
        }
        if (looksLikeCardNumber(source)) {
            return Reply.error(400, "card_data_rejected", "source must be a token, never card data");
        }
        return switch (source) {
            case TOK_VISA,
                    TOK_MASTERCARD,
                    TOK_CHARGE_DECLINED,
                    TOK_INSUFFICIENT_FUNDS,
                    TOK_TIMEOUT_CAPTURED,
                    TOK_TIMEOUT_NOT_RECEIVED,
                    TOK_REFUND_FAILS,
                    TOK_CAPTURE_TIMEOUT -> null;
            default -> Reply.error(400, "unknown_source", "Unknown source token");
        };
    }

    private Reply validate(String key, RefundRequest req) {
        Reply bad = validateEnvelope(key, req, req == null ? null : req.reference());
        if (bad != null) {
            return bad;
        }
        if (req.charge() == null || req.charge().isEmpty()) {
            return Reply.error(400, "missing_charge", "charge is required");
        }
        if (req.amount() == null || req.amount() < 1 || req.amount() > MAX_AMOUNT) {
            return Reply.error(400, "invalid_amount", "amount must be an integer between 1 and 10^12");
        }
        return null;
    }

    private static final Reply INVALID_KEY =
            Reply.error(400, "invalid_idempotency_key", "Idempotency-Key must be 1-255 printable ASCII characters");

    /** What every request needs: a valid Idempotency-Key, a body, and a reference in it. */
    private static Reply validateEnvelope(String key, Object body, String reference) {
        if (!printable(key)) {
            return Reply.error(
                    400, "invalid_idempotency_key", "Idempotency-Key must be 1-255 printable ASCII characters");
        }
        if (body == null) {
            return Reply.error(400, "invalid_request", "A JSON body is required");
        }
        if (!printable(reference)) {
            return Reply.error(400, "invalid_reference", "reference must be 1-255 printable ASCII characters");
        }
        return null;
    }

    /** 1-255 printable ASCII characters (what an Idempotency-Key or a reference may be). */
    public static boolean printable(String s) {
        if (s == null || s.isEmpty() || s.length() > 255) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static boolean currency(String s) {
        if (s == null || s.length() != 3) {
            return false;
        }
        for (int i = 0; i < 3; i++) {
            char c = s.charAt(i);
            if (c < 'A' || c > 'Z') {
                return false;
            }
        }
        return true;
    }

    /** 12 or more digits, possibly separated by spaces or dashes. */
    static boolean looksLikeCardNumber(String s) {
        int digits = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                digits++;
            } else if (c != ' ' && c != '-') {
                return false;
            }
        }
        return digits >= 12;
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** prefix + 24 random hex digits (96 bits). */
    public static String newId(String prefix) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long a = random.nextLong();
        int b = random.nextInt();
        int p = prefix.length();
        char[] out = new char[p + 24];
        prefix.getChars(0, p, out, 0);
        for (int i = 0; i < 16; i++) {
            out[p + i] = HEX[(int) (a >>> (60 - 4 * i)) & 0xf];
        }
        for (int i = 0; i < 8; i++) {
            out[p + 16 + i] = HEX[(b >>> (28 - 4 * i)) & 0xf];
        }
        return new String(out);
    }

    private byte[] toJson(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Per reference: counters, and the first charge or refund made for it. */
    static final class RefState {
        static final AtomicIntegerFieldUpdater<RefState> CHARGE_REQUESTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "chargeRequests");
        static final AtomicIntegerFieldUpdater<RefState> CHARGE_MOVEMENTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "chargeMovements");
        static final AtomicIntegerFieldUpdater<RefState> REFUND_REQUESTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "refundRequests");
        static final AtomicIntegerFieldUpdater<RefState> REFUND_MOVEMENTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "refundMovements");
        static final AtomicIntegerFieldUpdater<RefState> CAPTURE_REQUESTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "captureRequests");
        static final AtomicLongFieldUpdater<RefState> CAPTURED_AMOUNT =
                AtomicLongFieldUpdater.newUpdater(RefState.class, "capturedAmount");
        static final AtomicIntegerFieldUpdater<RefState> VOID_REQUESTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "voidRequests");
        static final AtomicIntegerFieldUpdater<RefState> VOID_MOVEMENTS =
                AtomicIntegerFieldUpdater.newUpdater(RefState.class, "voidMovements");

        volatile int chargeRequests;
        volatile int chargeMovements;
        volatile int refundRequests;
        volatile int refundMovements;
        volatile int captureRequests;
        volatile long capturedAmount;
        volatile int voidRequests;
        volatile int voidMovements;
        volatile Charge charge;
        volatile byte[] refundJson;

        RefState(String reference) {}

        synchronized void setRefundJson(byte[] json) {
            if (refundJson == null) {
                refundJson = json;
            }
        }
    }
}
