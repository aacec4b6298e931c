package com.payments.refunds.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.psp.PspConcurrencyLimit;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/**
 * Refunds at the PSP, with the refund id as both {@code Idempotency-Key} and {@code reference}, so any number of
 * sends of one refund move money at most once. Definite answers (success, decline, rejection, not found) are items
 * and never count as circuit-breaker failures; timeouts, connection errors and 5xx are failed {@code Uni}s (unknown
 * outcome) and do, as does a call that found the instance's limit of concurrent PSP calls saturated
 * ({@link com.payments.psp.PspSaturatedException}, never sent). Every call runs under {@link PspConcurrencyLimit}
 * (psp-common), inside the timeout.
 */
@ApplicationScoped
public class PspClient {
    /** PSP error codes of a refund it refused for good without moving money: a decline, not a rejection. */
    private static final Set<String> DECLINE_CODES = Set.of("amount_exceeds_refundable", "charge_not_refundable");

    private final PspRefundsApi api;
    private final ObjectMapper mapper;
    private final PspConcurrencyLimit limit;

    public PspClient(@RestClient PspRefundsApi api, ObjectMapper mapper, PspConcurrencyLimit limit) {
        this.api = api;
        this.mapper = mapper;
        this.limit = limit;
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> refund(UUID refundId, String chargeReference, long amount) {
        String reference = refundId.toString();
        return limit.run(() ->
                        answer(api.create(reference, new PspRefundsApi.RefundBody(reference, chargeReference, amount))))
                .map(response -> interpret(response, false));
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> lookup(UUID refundId) {
        return limit.run(() -> answer(api.byReference(refundId.toString()))).map(response -> interpret(response, true));
    }

    /** The HTTP answer whatever its status, should a default exception mapper turn a 4xx/5xx into an exception. */
    private static Uni<Response> answer(Uni<Response> call) {
        return call.onFailure(WebApplicationException.class)
                .recoverWithItem(e -> ((WebApplicationException) e).getResponse());
    }

    private PspOutcome interpret(Response response, boolean lookup) {
        int status = response.getStatus();
        JsonNode body = body(response);
        if (status == 200) {
            String id = body.path("id").asText(null);
            return switch (body.path("status").asText("")) {
                case "succeeded" -> {
                    if (id == null) {
                        throw new PspUnavailableException("PSP refund answer without id");
                    }
                    yield new PspOutcome.Succeeded(id);
                }
                case "failed" -> new PspOutcome.Failed("psp_refund_failed");
                default -> throw new PspUnavailableException("PSP refund answer with unexpected status");
            };
        }
        if (status >= 500 || status == 408 || status == 429) {
            throw new PspUnavailableException("PSP answered " + status);
        }
        String code = body.path("error").path("code").asText("http_" + status);
        if (lookup && status == 404) {
            return new PspOutcome.NotFound();
        }
        if (status == 422 && DECLINE_CODES.contains(code)) {
            return new PspOutcome.Failed(code);
        }
        return new PspOutcome.Rejected(status, code);
    }

    private JsonNode body(Response response) {
        try {
            String text = response.readEntity(String.class);
            return text == null || text.isBlank() ? mapper.missingNode() : mapper.readTree(text);
        } catch (Exception e) {
            // An unreadable body is outside the protocol: the outcome is unknown.
            throw new PspUnavailableException("Unreadable PSP answer (HTTP " + response.getStatus() + ")");
        }
    }
}
