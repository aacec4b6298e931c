package com.payments.refunds.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.refunds.service.RefundsMetrics;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
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
    private final RefundsMetrics metrics;

    public PspClient(
            @RestClient PspRefundsApi api, ObjectMapper mapper, PspConcurrencyLimit limit, RefundsMetrics metrics) {
        this.api = api;
        this.mapper = mapper;
        this.limit = limit;
        this.metrics = metrics;
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> refund(UUID refundId, String chargeReference, long amount) {
        String reference = refundId.toString();
        return call(
                "refund",
                () -> api.create(reference, new PspRefundsApi.RefundBody(reference, chargeReference, amount)));
    }

    @Timeout(5000)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 10_000, successThreshold = 2)
    public Uni<PspOutcome> lookup(UUID refundId) {
        return call("lookup", () -> api.byReference(refundId.toString()));
    }

    /**
     * One HTTP call under the concurrency limit, interpreted; its latency (from the request's start, not counting
     * the wait for a permit) goes to {@code refunds_psp_latency_seconds{call,outcome}}. A call cut by the timeout is
     * cancelled and counts as {@code error}, like any call without an answer.
     */
    private Uni<PspOutcome> call(String call, Supplier<Uni<Response>> request) {
        long[] started = {0};
        return limit.run(() -> {
                    started[0] = System.nanoTime();
                    return answer(request.get());
                })
                .map(response -> interpret(response, call.equals("lookup")))
                .onTermination()
                .invoke((outcome, failure, cancelled) -> {
                    if (started[0] != 0) {
                        metrics.pspLatency(call, outcomeLabel(outcome), System.nanoTime() - started[0]);
                    }
                });
    }

    private static String outcomeLabel(PspOutcome outcome) {
        if (outcome instanceof PspOutcome.Succeeded) {
            return "succeeded";
        }
        if (outcome instanceof PspOutcome.Failed) {
            return "failed";
        }
        if (outcome instanceof PspOutcome.Rejected) {
            return "rejected";
        }
        if (outcome instanceof PspOutcome.NotFound) {
            return "not_found";
        }
        return "error";
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
