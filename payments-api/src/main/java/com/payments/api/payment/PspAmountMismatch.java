package com.payments.api.payment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.common.OperationsRepository;
import com.payments.api.payment.PaymentRepository.Locked;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The PSP reports our payment's charge with another amount or currency than the payment row: a webhook's
 * {@code data}, or the resolver's lookup. Both paths then record no money and open this one operations item on the
 * payment (at most one OPEN per payment, whichever path saw it first); docs/resolver.md.
 */
@ApplicationScoped
public class PspAmountMismatch {
    public static final String REASON = "psp_amount_mismatch";

    private final OperationsRepository operations;
    private final ObjectMapper mapper;

    public PspAmountMismatch(OperationsRepository operations, ObjectMapper mapper) {
        this.operations = operations;
        this.mapper = mapper;
    }

    /**
     * True when the charge's {@code amount} (an integer) and {@code currency}, each where the PSP reports it, are the
     * payment's: the amount it charged, which for a manual payment's capture is the captured amount (Stripe's
     * {@code amount_received} after a partial capture). The protocol's charge (docs/architecture.md §5) need not carry
     * them; the sandbox's and most PSPs' do.
     */
    public static boolean sameMoney(Locked payment, JsonNode charge) {
        JsonNode amount = charge.path("amount");
        JsonNode currency = charge.path("currency");
        return (amount.isMissingNode()
                        || (amount.isIntegralNumber()
                                && amount.canConvertToLong()
                                && amount.asLong() == payment.charged()))
                && (currency.isMissingNode() || payment.currency().equals(currency.asText()));
    }

    /**
     * Opens the payment's item; true when this call opened it (false: it is open already).
     *
     * @param detectedBy {@code resolver} or {@code webhook}
     * @param context what the detecting path adds to the details (the attempt, or the event's id and type)
     */
    public Uni<Boolean> open(SqlClient conn, Locked payment, JsonNode charge, String detectedBy, ObjectNode context) {
        ObjectNode details = mapper.createObjectNode();
        details.put("reason", REASON);
        details.put("detectedBy", detectedBy);
        details.setAll(context);
        details.set("data", charge);
        details.put("paymentStatus", payment.status().name());
        details.put("paymentAmount", payment.amount());
        if (payment.capturedAmount() != null) {
            details.put("paymentCapturedAmount", payment.capturedAmount());
        }
        details.put("paymentCurrency", payment.currency());
        details.put(
                "action",
                "The PSP reports a charge under this payment id with another amount or currency than ours (data);"
                        + " nothing was booked for it. Check the charge at the PSP, refund or void a wrong charge"
                        + " there, then resolve this item (docs/resolver.md, For operators).");
        return operations.open(conn, "payment", payment.id().toString(), REASON, details.toString());
    }
}
