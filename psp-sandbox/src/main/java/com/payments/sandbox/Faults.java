package com.payments.sandbox;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The fault knobs in force. Starts from configuration; {@code PUT /test/faults} changes any subset of
 * them at runtime (null fields keep their value). Rates are fractions between 0.0 and 1.0. {@code rateLimitRate}
 * applies to the Stripe mode only (429 {@code rate_limit}); the others apply to both modes.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Faults(
        Long latencyFixedMs,
        Long latencySpreadMs,
        Double errorRate,
        Double timeoutRate,
        Double notReceivedRate,
        Double webhookDuplicateRate,
        Double webhookReorderRate,
        Double webhookDropRate,
        Integer settlementDrop,
        Integer settlementAmountMismatch,
        Integer settlementPhantom,
        Double rateLimitRate) {

    /** This record with every non-null field of {@code patch} applied. */
    public Faults merge(Faults patch) {
        return new Faults(
                patch.latencyFixedMs != null ? patch.latencyFixedMs : latencyFixedMs,
                patch.latencySpreadMs != null ? patch.latencySpreadMs : latencySpreadMs,
                patch.errorRate != null ? patch.errorRate : errorRate,
                patch.timeoutRate != null ? patch.timeoutRate : timeoutRate,
                patch.notReceivedRate != null ? patch.notReceivedRate : notReceivedRate,
                patch.webhookDuplicateRate != null ? patch.webhookDuplicateRate : webhookDuplicateRate,
                patch.webhookReorderRate != null ? patch.webhookReorderRate : webhookReorderRate,
                patch.webhookDropRate != null ? patch.webhookDropRate : webhookDropRate,
                patch.settlementDrop != null ? patch.settlementDrop : settlementDrop,
                patch.settlementAmountMismatch != null ? patch.settlementAmountMismatch : settlementAmountMismatch,
                patch.settlementPhantom != null ? patch.settlementPhantom : settlementPhantom,
                patch.rateLimitRate != null ? patch.rateLimitRate : rateLimitRate);
    }
}
