package com.payments.sandbox.stripe;

import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Intent;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The itemized payout reconciliation report ({@code payout_reconciliation.itemized.5}) of one sandbox payout as CSV:
 * one line per balance transaction of the payout, amounts in major units as Stripe's reports give them, with the
 * PaymentIntent's {@code metadata[payment_id]} and the refund's {@code metadata[refund_id]} as extra columns. Stripe
 * produces it through a report run and a file download; the sandbox serves the file directly.
 */
@ApplicationScoped
public class StripeReport {

    static final String HEADER =
            "automatic_payout_id,balance_transaction_id,created_utc,available_on_utc,currency,gross,"
                    + "fee,net,reporting_category,source_id,description,payment_intent_id,charge_id,refund_id,dispute_id,"
                    + "payment_metadata[payment_id],refund_metadata[refund_id]\n";

    private static final DateTimeFormatter UTC =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private final StripeStore store;
    private final StripeBalance balance;

    public StripeReport(StripeStore store, StripeBalance balance) {
        this.store = store;
        this.balance = balance;
    }

    String itemized(LocalDate day) {
        String payout = StripeBalance.payoutId(day);
        String availableOn = UTC.format(day.atStartOfDay(ZoneOffset.UTC).toInstant());
        StringBuilder csv = new StringBuilder(HEADER);
        for (BalanceTxn txn : balance.payoutItems(day)) {
            Intent intent = store.intentOf(txn.source());
            String source = txn.source();
            csv.append(payout).append(',');
            csv.append(txn.id()).append(',');
            csv.append(UTC.format(Instant.ofEpochSecond(txn.created()))).append(',');
            csv.append(availableOn).append(',');
            csv.append(txn.currency()).append(',');
            csv.append(major(txn.amount(), txn.currency())).append(',');
            csv.append(major(txn.fee(), txn.currency())).append(',');
            csv.append(major(txn.amount() - txn.fee(), txn.currency())).append(',');
            csv.append(txn.reportingCategory()).append(',');
            csv.append(source).append(',');
            csv.append(quote(txn.description())).append(',');
            csv.append(intent == null ? "" : intent.id).append(',');
            csv.append(intent == null || intent.chargeId == null ? "" : intent.chargeId)
                    .append(',');
            csv.append(source.startsWith("re_") ? source : "").append(',');
            csv.append(source.startsWith("dp_") ? source : "").append(',');
            csv.append(quote(intent == null ? null : intent.metadata.get("payment_id")))
                    .append(',');
            csv.append(quote(store.refundMetadata(source).get("refund_id"))).append('\n');
        }
        return csv.toString();
    }

    /**
     * Minor units as Stripe's reports print them: {@code 2500 eur} is {@code 25.00}, {@code 2500 jpy} is {@code 2500},
     * {@code 5120 kwd} is {@code 5.120}.
     */
    static String major(long minor, String currency) {
        return StripeAmounts.major(minor, currency);
    }

    /** RFC 4180: quoted when it holds a comma, quote or line break. */
    static String quote(String value) {
        if (value == null) {
            return "";
        }
        if (value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0) {
            return value;
        }
        return '"' + value.replace("\"", "\"\"") + '"';
    }
}
