package com.payments.api.common;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.stream.LongStream;

/**
 * Latency buckets for the HTTP server timer ({@code http_server_requests_seconds_bucket}), so that Prometheus can
 * compute the merchant API's p99 (k8s/monitoring: MerchantApiLatencyP99High). Eleven fixed buckets, 5 ms to 10 s,
 * instead of Micrometer's ~70 percentile-histogram buckets per URI, method and status.
 */
@Singleton
public class HttpServerHistogram {
    private static final double[] BUCKETS_NANOS = LongStream.of(5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000)
            .mapToDouble(millis -> Duration.ofMillis(millis).toNanos())
            .toArray();

    @Produces
    @Singleton
    MeterFilter httpServerBuckets() {
        return new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (!id.getName().equals("http.server.requests")) {
                    return config;
                }
                return DistributionStatisticConfig.builder()
                        .serviceLevelObjectives(BUCKETS_NANOS)
                        .build()
                        .merge(config);
            }
        };
    }
}
