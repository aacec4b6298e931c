package com.payments.sandbox.stripe;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Faults;
import com.payments.sandbox.Reply;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.SettlementService;
import com.payments.sandbox.stripe.StripeStore.BalanceTxn;
import com.payments.sandbox.stripe.StripeStore.Intent;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Balance transactions and their payouts: the list the API answers, with the settlement files' discrepancy knobs
 * applied, the items of the payout reconciliation report and what the knobs changed. The sandbox pays out each
 * settlement day once.
 */
@ApplicationScoped
public class StripeBalance {

    static final Comparator<BalanceTxn> NEWEST_FIRST = StripeJson.newestFirst(BalanceTxn::created, BalanceTxn::id);

    private final StripeStore store;
    private final StripeJson json;
    private final FaultSettings faults;
    private final SettlementService settlements;
    private final long discrepancySeed;

    public StripeBalance(
            StripeStore store,
            StripeJson json,
            FaultSettings faults,
            SettlementService settlements,
            SandboxConfig config) {
        this.store = store;
        this.json = json;
        this.faults = faults;
        this.settlements = settlements;
        this.discrepancySeed = config.settlement().discrepancies().seed();
    }

    /**
     * {@code GET /v1/balance_transactions}, newest first, paged with {@code limit} and {@code starting_after}, filtered
     * by {@code payout}, {@code created[gte|gt|lte|lt]} and {@code type}; {@code expand[]=data.source} embeds each
     * source, {@code data.source.payment_intent} also its PaymentIntent.
     */
    public Reply transactions(StripeParams params) {
        int limit = StripeParams.limit(params.get("limit"));
        if (limit < 0) {
            return StripeParams.limitError();
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
            Long parsed = StripeParams.parseLong(text);
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
        int from = StripeJson.after(all, BalanceTxn::id, params.get("starting_after"));
        if (from < 0) {
            return StripeErrors.invalid("resource_missing", "No such balance_transaction.", "starting_after");
        }
        List<String> expand = params.all("expand[]");
        boolean source = expand.contains("data.source") || expand.contains("data.source.payment_intent");
        boolean sourceIntent = expand.contains("data.source.payment_intent");
        return json.ok(json.page("list", "/v1/balance_transactions", all, from, limit, txn -> {
            ObjectNode item = json.balanceJson(txn);
            ObjectNode src = source ? json.sourceJson(txn.source(), sourceIntent) : null;
            if (src != null) {
                item.set("source", src);
            }
            return item;
        }));
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
        Map<String, BalanceTxn> listedById = new LinkedHashMap<>();
        for (BalanceTxn txn : listed()) {
            if (settlements.settlementDay(txn.at()) == day.toEpochDay()) {
                listedById.put(txn.id(), txn);
            }
        }
        List<SettlementService.Injected> injected = new ArrayList<>();
        for (BalanceTxn txn : store.balance()) {
            if (settlements.settlementDay(txn.at()) != day.toEpochDay()) {
                continue;
            }
            BalanceTxn shown = listedById.remove(txn.id());
            if (shown == null || shown.amount() != txn.amount()) {
                Intent intent = store.intentOf(txn.source());
                String reference = txn.source().startsWith("re_")
                        ? store.refundMetadata(txn.source()).get("refund_id")
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
            return new ArrayList<>(store.balance());
        }
        TreeMap<Long, List<BalanceTxn>> days = new TreeMap<>();
        for (BalanceTxn txn : store.balance()) {
            days.computeIfAbsent(settlements.settlementDay(txn.at()), d -> new ArrayList<>())
                    .add(txn);
        }
        List<BalanceTxn> out = new ArrayList<>();
        for (Map.Entry<Long, List<BalanceTxn>> day : days.entrySet()) {
            List<BalanceTxn> items = day.getValue();
            items.sort(NEWEST_FIRST.reversed());
            Random random = new Random(discrepancySeed * 1_000_003L + day.getKey());
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < items.size(); i++) {
                order.add(i);
            }
            Collections.shuffle(order, random);
            Set<Integer> dropped = new HashSet<>(order.subList(0, Math.min(drop, order.size())));
            int changed = Math.min(order.size(), dropped.size() + mismatch);
            Map<Integer, Long> amounts = new HashMap<>();
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
                    .atStartOfDay(ZoneOffset.UTC)
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
}
