package com.payments.recon.service;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.Map;

/**
 * What a run printed and stored in {@code recon_runs.summary}, as one flat JSON object (docs/reconciler.md). A run
 * that failed or did not start has only the parts it got to; the others are null and left out.
 *
 * @param runId the recon_runs row (null when LOCKED, or when even the failure could not be recorded)
 * @param load the settlement file's loading, once done
 * @param match the match and its effects, once done
 * @param line the settlement line that failed the run
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@RegisterForReflection
public record RunSummary(
        String businessDate,
        String source,
        String window,
        Long runId,
        @JsonUnwrapped Load load,
        @JsonUnwrapped Match match,
        String status,
        String error,
        Long line,
        Long durationMs) {

    @RegisterForReflection
    public record Load(long linesLoaded, long loadMs) {}

    /**
     * @param matched items matched inside or outside the window
     * @param matchedAmounts sum of the matched amounts per currency
     * @param breaks this run's count of every break type
     * @param outcomes this run's count of every match outcome it saw
     * @param openBreaks breaks of the date OPEN after the run
     * @param reportedBreaks breaks of the date REPORTED after the run
     * @param fees the file's fee total per currency
     */
    @RegisterForReflection
    public record Match(
            long matchMs,
            long matched,
            Map<String, Long> matchedAmounts,
            Map<String, Long> breaks,
            Map<String, Long> outcomes,
            long awaitingNextFile,
            int newlyReported,
            int resolved,
            long openBreaks,
            long reportedBreaks,
            int capturedUnknown,
            long chargebacks,
            Map<String, Long> fees,
            int queuedForHumans) {}
}
