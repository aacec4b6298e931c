package com.payments.sandbox.stripe;

import com.payments.sandbox.service.PspService;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one in-memory store of the Stripe mode: PaymentIntents and their charges, refunds, disputes and the balance
 * transactions that every money movement books. {@link StripeIntents}, {@link StripeRefunds}, {@link StripeDisputes}
 * and {@link StripeBalance} read and write it.
 */
@ApplicationScoped
public class StripeStore {

    /** What a test payment method does. */
    enum Behaviour {
        SUCCEED,
        DECLINE_GENERIC,
        DECLINE_INSUFFICIENT_FUNDS,
        REQUIRE_ACTION,
        DISPUTE,
        REFUND_FAILS
    }

    /**
     * A PaymentIntent and its one charge. With {@code capture_method=manual} it moves once from {@code requires_capture}
     * to {@code succeeded} (captured) or {@code canceled} (canceled, or expired on the sandbox clock): {@link #move}
     * under the intent's lock, so that a capture and a cancel racing on one intent end with exactly one of them.
     */
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
        final String declineCode;
        /** {@code automatic} or {@code manual}. */
        final String captureMethod;
        /** When an uncaptured manual intent is canceled ({@code automatic}); null for automatic capture. */
        final Instant expiresAt;

        volatile String status;
        /** The money taken: the amount of an automatic intent that succeeded, the captured amount of a manual one. */
        volatile long amountReceived;

        volatile Instant canceledAt;
        volatile String cancellationReason;
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
                String declineCode,
                String captureMethod,
                Instant expiresAt) {
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
            this.captureMethod = captureMethod;
            this.expiresAt = expiresAt;
            this.amountReceived = "succeeded".equals(status) ? amount : 0;
        }

        /** An uncaptured manual intent past {@code expiresAt} is canceled ({@code automatic}) as it is read. */
        synchronized void expireIfDue(Instant now) {
            if ("requires_capture".equals(status) && !now.isBefore(expiresAt)) {
                status = "canceled";
                cancellationReason = "automatic";
                canceledAt = expiresAt;
            }
        }

        /**
         * Moves the intent from one of {@code from} to {@code to}; false (nothing changed) when it is in none of them.
         * {@code received} becomes {@link #amountReceived} when moving to {@code succeeded}.
         */
        synchronized boolean move(Instant now, java.util.Set<String> from, String to, long received, String reason) {
            expireIfDue(now);
            if (!from.contains(status)) {
                return false;
            }
            status = to;
            if ("succeeded".equals(to)) {
                amountReceived = received;
            } else {
                cancellationReason = reason;
                canceledAt = now;
            }
            return true;
        }

        boolean succeeded() {
            return "succeeded".equals(status);
        }

        /** Reserves {@code value} of what is left to refund; false when it would exceed the amount received. */
        boolean tryRefund(long value) {
            long limit = amountReceived;
            long before = refunded.getAndUpdate(current -> current + value > limit ? current : current + value);
            return before + value <= limit;
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

    // Read through methods only: the beans that share the store get a client proxy, whose fields are not these.
    private final ConcurrentHashMap<String, Intent> intents = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Intent> intentsByCharge = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, StripeRefund> refunds = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Dispute> disputes = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<BalanceTxn> balance = new ConcurrentLinkedQueue<>();

    /** The intent of this id; null when unknown (or {@code id} is null). */
    Intent intent(String id) {
        return id == null ? null : intents.get(id);
    }

    /** The intent of this charge id; null when unknown. */
    Intent intentOfCharge(String chargeId) {
        return chargeId == null ? null : intentsByCharge.get(chargeId);
    }

    Collection<Intent> intents() {
        return intents.values();
    }

    /** The refund of this id; null when unknown (or {@code id} is null). */
    StripeRefund refund(String id) {
        return id == null ? null : refunds.get(id);
    }

    Collection<StripeRefund> refunds() {
        return refunds.values();
    }

    void add(StripeRefund refund) {
        refunds.put(refund.id, refund);
    }

    Dispute dispute(String id) {
        return disputes.get(id);
    }

    void add(Dispute dispute) {
        disputes.put(dispute.id(), dispute);
    }

    /** Every balance transaction, in booking order. */
    Collection<BalanceTxn> balance() {
        return balance;
    }

    void add(Intent intent) {
        intents.put(intent.id, intent);
        if (intent.chargeId != null) {
            intentsByCharge.put(intent.chargeId, intent);
        }
    }

    /** Books a balance transaction of a new id. */
    BalanceTxn book(
            String type, String category, long amount, long fee, String currency, Instant at, String source, String d) {
        BalanceTxn txn = new BalanceTxn(PspService.newId("txn_"), type, category, amount, fee, currency, at, source, d);
        balance.add(txn);
        return txn;
    }

    BalanceTxn balanceTransaction(String id) {
        for (BalanceTxn txn : balance) {
            if (txn.id().equals(id)) {
                return txn;
            }
        }
        throw new IllegalStateException("no balance transaction " + id);
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

    /** Forgets every intent, refund, dispute and balance transaction. */
    public void reset() {
        intents.clear();
        intentsByCharge.clear();
        refunds.clear();
        disputes.clear();
        balance.clear();
    }
}
