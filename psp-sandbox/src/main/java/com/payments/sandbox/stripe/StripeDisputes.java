package com.payments.sandbox.stripe;

import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Dispute;
import com.payments.sandbox.stripe.StripeStore.Intent;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;

/** Disputes: the chargeback a charge of {@code pm_card_createDispute} gets right after it succeeds. */
@ApplicationScoped
public class StripeDisputes {

    private final StripeStore store;
    private final StripeJson json;
    private final StripeEvents events;
    private final SandboxClock clock;
    private final long disputeFee;

    public StripeDisputes(
            StripeStore store, StripeJson json, StripeEvents events, SandboxClock clock, SandboxConfig config) {
        this.store = store;
        this.json = json;
        this.events = events;
        this.clock = clock;
        this.disputeFee = config.stripe().disputeFee();
    }

    /** Opens a dispute on the intent's charge: the amount and the dispute fee leave the balance. */
    void open(Intent intent, String reference) {
        Instant now = clock.now();
        String id = PspService.newId("dp_");
        BalanceTxn txn = store.book(
                "adjustment",
                "dispute",
                -intent.amount,
                disputeFee,
                intent.currency,
                now,
                id,
                "Chargeback withdrawal for " + intent.chargeId);
        Dispute dispute = new Dispute(id, intent, now.getEpochSecond(), txn.id());
        store.add(dispute);
        intent.disputeId = id;
        events.publish("charge.dispute.created", reference, json.disputeJson(dispute));
    }
}
