package com.payments.api.payment;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.api.client.PspAttentionException;
import com.payments.api.common.OperationsRepository;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/**
 * The PSP refused a payment's charge or look-up in a way only an operator can settle ({@link PspAttentionException}:
 * Stripe's {@code idempotency_error} for a key used with other parameters, a rejected API key, a 500 Stripe replays
 * under the key with no PaymentIntent found). The payment stays
 * UNKNOWN (never FAILED: a charge may exist under the key) and the resolver keeps asking; this item, at most one OPEN
 * per payment, tells an operator. Opened by the capture path or the resolver, whichever sees it first; a final
 * outcome of the payment resolves it (docs/resolver.md, docs/operations.md).
 */
@ApplicationScoped
public class PspChargeAttention {
    public static final String REASON = PaymentOutcomeService.ATTENTION_REASON;

    private final OperationsRepository operations;
    private final ObjectMapper mapper;

    public PspChargeAttention(OperationsRepository operations, ObjectMapper mapper) {
        this.operations = operations;
        this.mapper = mapper;
    }

    /**
     * Opens the payment's item; true when this call opened it.
     *
     * @param detectedBy {@code capture} or {@code resolver}
     */
    public Uni<Boolean> open(SqlClient conn, UUID paymentId, PspAttentionException answer, String detectedBy) {
        ObjectNode details = mapper.createObjectNode();
        details.put("reason", REASON);
        details.put("detectedBy", detectedBy);
        details.put("paymentId", paymentId.toString());
        details.put("pspAnswer", answer.detail());
        if (answer.pspChargeId() != null) {
            details.put("pspChargeId", answer.pspChargeId());
        }
        details.put(
                "action",
                "The PSP refused the charge request for this payment (pspAnswer). idempotency_error: the PSP holds a"
                        + " request under this payment id with other parameters; look it up at the PSP by metadata"
                        + " payment_id. http_401/403/404: check the API key and URL (STRIPE_API_KEY, psp.stripe.*)."
                        + " 'the PSP replays a 500 under the key until <time>': the first request got a 500 the PSP"
                        + " keeps under the key and no charge is found; nothing to do but not charge by hand: the"
                        + " resolver settles it if the PSP shows a charge, else sends it anew after that time."
                        + " The payment stays UNKNOWN and the resolver keeps asking; its final outcome resolves this"
                        + " item (docs/resolver.md).");
        return operations.open(conn, "payment", paymentId.toString(), REASON, details.toString());
    }
}
