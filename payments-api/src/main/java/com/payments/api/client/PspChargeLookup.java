package com.payments.api.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;

/**
 * What the PSP knows about a payment's charge ({@link PspPort#lookUpCharge}; the sandbox protocol asks
 * {@code GET /v1/charges?reference=<payment id>}). Used by the resolver outside any database transaction. NOT_FOUND is
 * a normal answer (the PSP never received the charge) and does not count against the circuit; an UNKNOWN answer and
 * timeouts do. Timings: {@code quarkus.fault-tolerance."com.payments.api.client.PspChargeLookup/find".*}.
 */
@ApplicationScoped
public class PspChargeLookup {

    /** A definite answer of the lookup. */
    public sealed interface Answer {
        /**
         * The PSP has a charge for the reference: succeeded (with its id) or declined (with its code); {@code charge}
         * is the charge as the PSP reported it (id, status and, where reported, amount and currency; not checked here).
         */
        record Found(String chargeId, boolean succeeded, String declineCode, JsonNode charge) implements Answer {}

        /** The PSP never received a charge with this reference. */
        record NotFound() implements Answer {}
    }

    private final PspPort port;
    private final ObjectMapper mapper;

    public PspChargeLookup(PspPort port, ObjectMapper mapper) {
        this.port = port;
        this.mapper = mapper;
    }

    /** @return a definite answer; fails with a timeout, {@link PspUnavailableException} or {@link PspNotSentException}. */
    @Timeout(2000)
    // MicroProfile's defaults: opens at 50 % failures of 20 calls, half-opens after 5 s, closes after 1 success
    @CircuitBreaker(skipOn = PspChargePendingException.class)
    public Uni<Answer> find(ChargeQuery query) {
        return port.lookUpCharge(query).map(result -> switch (result.status()) {
            case NOT_FOUND -> new Answer.NotFound();
            case CAPTURED, DECLINED ->
                new Answer.Found(
                        result.pspChargeId(),
                        result.status() == ChargeResult.Status.CAPTURED,
                        result.declineCode(),
                        reported(result));
            // AUTHORIZED and CANCELED answer look-ups of authorizations only, which payments-api does not send yet
            case UNKNOWN, NOT_SENT, AUTHORIZED, CANCELED -> throw PspGateway.notDefinite(result);
        });
    }

    private JsonNode reported(ChargeResult result) {
        ObjectNode charge = mapper.createObjectNode()
                .put("id", result.pspChargeId())
                .put("status", result.status().name());
        if (result.amount() != null) {
            charge.put("amount", result.amount());
        }
        if (result.currency() != null) {
            charge.put("currency", result.currency());
        }
        return charge;
    }
}
