package com.payments.api.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * {@code GET /v1/charges?reference=<payment id>}: what the PSP knows about a payment's charge. Used by the resolver
 * outside any database transaction. A 404 is a normal answer (the PSP never received the charge) and does not count
 * against the circuit; 5xx, timeouts and connection errors do. Timings:
 * {@code quarkus.fault-tolerance."com.payments.api.client.PspChargeLookup/find".*}.
 */
@ApplicationScoped
public class PspChargeLookup {

    /** A definite answer of the lookup. */
    public sealed interface Answer {
        /**
         * The PSP has a charge for the reference: succeeded (with its id) or declined (with its code); {@code charge}
         * is the charge as the PSP reported it (its amount and currency are not checked here).
         */
        record Found(String chargeId, boolean succeeded, String declineCode, JsonNode charge) implements Answer {}

        /** The PSP never received a charge with this reference. */
        record NotFound() implements Answer {}
    }

    private final PspClient client;
    private final ObjectMapper mapper;

    public PspChargeLookup(@RestClient PspClient client, ObjectMapper mapper) {
        this.client = client;
        this.mapper = mapper;
    }

    /** @return a definite answer; fails with a timeout, {@link PspUnavailableException} or an I/O error otherwise. */
    @Timeout(2000)
    @CircuitBreaker(requestVolumeThreshold = 20, failureRatio = 0.5, delay = 5000, successThreshold = 1)
    public Uni<Answer> find(UUID paymentId) {
        return client.chargeByReference(paymentId.toString()).map(response -> {
            int status = response.getStatus();
            if (status == 404) {
                // the error body is not a charge: do not read it
                return new Answer.NotFound();
            }
            JsonNode reported = status == 200 ? response.getEntity() : null;
            PspCharge charge = reported == null ? null : charge(reported);
            if (charge != null && charge.succeeded() && charge.id() != null) {
                return new Answer.Found(charge.id(), true, null, reported);
            }
            if (charge != null && charge.declined()) {
                return new Answer.Found(
                        charge.id(), false, charge.declineCode() == null ? "declined" : charge.declineCode(), reported);
            }
            throw new PspUnavailableException("PSP lookup answered " + status);
        });
    }

    /** The fields we act on; null when the body is not a charge (then the answer is not definite). */
    private PspCharge charge(JsonNode reported) {
        try {
            return reported.isObject() ? mapper.treeToValue(reported, PspCharge.class) : null;
        } catch (JsonProcessingException | IllegalArgumentException e) {
            return null;
        }
    }
}
