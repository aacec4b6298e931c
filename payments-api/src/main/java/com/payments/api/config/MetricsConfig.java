package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Gauges that payments-api reads from PostgreSQL for other parts of the platform ({@code payments.metrics.*}). */
@ConfigMapping(prefix = "payments.metrics")
public interface MetricsConfig {

    /**
     * How often each instance re-reads the reconciler's recorded runs and breaks for the {@code recon_*} gauges (a
     * Quarkus scheduler {@code every} value; {@code off} disables it). The reconciler runs once a day; two small
     * indexed queries per period.
     */
    @WithDefault("60s")
    String reconEvery();
}
