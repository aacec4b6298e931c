package com.payments.api.resolver;

import static com.payments.api.resolver.PaymentResolver.ACTOR;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.client.PspAttentionException;
import com.payments.api.common.OperationsRepository;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentRepository.Locked;
import com.payments.api.payment.PspAmountMismatch;
import com.payments.api.payment.PspChargeAttention;
import com.payments.api.resolver.ResolverRepository.Claimed;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * What the resolver hands to an operator, each as an operations item in the caller's transaction: a charge the PSP
 * reports with another amount or currency ({@link PspAmountMismatch}), an answer only an operator can settle
 * ({@link PspChargeAttention}), and a payment still unknown after the deadline.
 */
@ApplicationScoped
public class ResolverEscalations {
    private final OperationsRepository operations;
    private final PspAmountMismatch mismatch;
    private final PspChargeAttention attention;
    private final ObjectMapper mapper;

    public ResolverEscalations(
            OperationsRepository operations,
            PspAmountMismatch mismatch,
            PspChargeAttention attention,
            ObjectMapper mapper) {
        this.operations = operations;
        this.mismatch = mismatch;
        this.attention = attention;
        this.mapper = mapper;
    }

    Uni<Boolean> amountMismatch(SqlClient conn, Claimed claim, Locked current, JsonNode reported) {
        return mismatch.open(
                conn, current, reported, ACTOR, mapper.createObjectNode().put("attempt", claim.attempt()));
    }

    Uni<Boolean> attention(SqlClient conn, Claimed claim, PspAttentionException answer) {
        return attention.open(conn, claim.id(), answer, ACTOR);
    }

    Uni<Boolean> deadlinePassed(SqlClient conn, Claimed claim, String error) {
        return operations.open(
                conn, "payment", claim.id().toString(), PaymentOutcomeService.DEADLINE_REASON, details(claim, error));
    }

    private String details(Claimed claim, String error) {
        ObjectNode node = mapper.createObjectNode();
        node.put("paymentId", claim.id().toString());
        node.put("merchantId", claim.merchantId().toString());
        node.put("amount", claim.amount());
        node.put("currency", claim.currency());
        node.put("createdAt", claim.createdAt().toString());
        node.put("attempts", claim.attempt());
        node.put("lastError", error);
        node.put(
                "action",
                "The PSP gave no definite answer before the deadline. Check the charge with reference = paymentId at the"
                        + " PSP; the reconciler's settlement match also shows it. The payment stays UNKNOWN; it is not"
                        + " retried automatically any more.");
        return node.toString();
    }
}
