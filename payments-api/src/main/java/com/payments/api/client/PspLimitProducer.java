package com.payments.api.client;

import com.payments.api.config.ApiConfig;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspLimitSettings;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The instance's one limit of concurrent PSP calls (psp-common's AIMD limit), from {@code payments.psp.limit.*}.
 * Captures and the resolver share it: one PSP, one connection pool. Gauges {@code payments_psp_limit} and
 * {@code payments_psp_in_flight}.
 */
public class PspLimitProducer {

    @Produces
    @Singleton
    PspConcurrencyLimit pspConcurrencyLimit(ApiConfig config, MeterRegistry registry) {
        ApiConfig.Psp.Limit limit = config.psp().limit();
        return new PspConcurrencyLimit(
                new PspLimitSettings(limit.initial(), limit.min(), limit.max(), limit.maxWaiting(), limit.maxWait()),
                registry,
                "payments.psp");
    }
}
