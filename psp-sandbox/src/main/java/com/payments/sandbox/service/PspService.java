package com.payments.sandbox.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * Charges and refunds, in memory. Idempotency: the first request of a key runs inside
 * {@link ConcurrentHashMap#computeIfAbsent}, so concurrent requests with one key make exactly one money
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
    }

    // ---------------------------------------------------------------- charges

    public Reply charge(String key, ChargeRequest req) {
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
        String fingerprint =
                "charge|" + req.reference() + '|' + req.amount() + '|' + req.currency() + '|' + req.source();
        Stored stored = keys.get(key);
        if (stored == null) {
            if ((TOK_TIMEOUT_NOT_RECEIVED.equals(req.source()) && notReceivedOnce.add(key))
                    || FaultSettings.roll(f.notReceivedRate())) {
                return NOT_RECEIVED.delayed(timeoutDelayMs);
            }
            stored = keys.computeIfAbsent(key, k -> executeCharge(fingerprint, req));
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
        if (charge.succeeded()) {
            RefState.CHARGE_MOVEMENTS.incrementAndGet(ref);
            settlements.record(charge);
            webhooks.publish("charge.succeeded", charge.reference, charge.json);
        } else {
            webhooks.publish("charge.failed", charge.reference, charge.json);
        }
        if (TOK_TIMEOUT_CAPTURED.equals(req.source()) || FaultSettings.roll(f.timeoutRate())) {
            return stored.reply().delayed(timeoutDelayMs);
        }
        return stored.reply();
    }

    /** Runs inside computeIfAbsent: creates the charge and makes it findable by id, nothing else. */
    private Stored executeCharge(String fingerprint, ChargeRequest req) {
        String source = req.source();
        String declineCode =
                switch (source) {
                    case TOK_CHARGE_DECLINED -> "card_declined";
                    case TOK_INSUFFICIENT_FUNDS -> "insufficient_funds";
                    default -> null;
                };
        String status = declineCode == null ? "succeeded" : "declined";
        String id = newId("ch_");
        Instant now = clock.now();
        byte[] json = toJson(
                new ChargeView(id, req.reference(), status, declineCode, req.amount(), req.currency(), now.toString()));
        Charge charge = new Charge(
                id,
                req.reference(),
                req.amount(),
                req.currency(),
                status,
                declineCode,
                TOK_REFUND_FAILS.equals(source),
                now,
                json);
        chargesById.put(id, charge);
        return new Stored(fingerprint, req, new Reply(200, json, false, 0), charge);
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
                : new Reply(200, charge.json, false, 0);
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
                ? new Counters(reference, 0, 0, 0, 0)
                : new Counters(
                        reference, ref.chargeRequests, ref.chargeMovements, ref.refundRequests, ref.refundMovements);
    }

    /** The Stripe mode counts into the same per-reference counters (see {@link #counters}). */
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
                    TOK_REFUND_FAILS -> null;
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

        volatile int chargeRequests;
        volatile int chargeMovements;
        volatile int refundRequests;
        volatile int refundMovements;
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
