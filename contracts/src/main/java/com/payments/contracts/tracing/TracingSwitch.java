package com.payments.contracts.tracing;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Tracing is on only where an OTLP endpoint is configured ({@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} or
 * {@code QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}): this source sets {@code quarkus.otel.sdk.disabled} to
 * {@code false} with one, to {@code true} without. Off, no span is recorded, the propagators are no-ops, and a request
 * pays nothing for tracing; Quarkus itself would keep the SDK on and export to {@code localhost:4317}. It always sets a
 * value because Quarkus records the value seen at build time (where no endpoint is set) as the runtime default. An
 * explicit {@code quarkus.otel.sdk.disabled} anywhere (application.properties, environment) wins: this source's
 * ordinal is below them all.
 */
public class TracingSwitch implements ConfigSourceFactory {
    static final String SDK_DISABLED = "quarkus.otel.sdk.disabled";
    static final List<String> ENDPOINTS =
            List.of("quarkus.otel.exporter.otlp.endpoint", "quarkus.otel.exporter.otlp.traces.endpoint");
    private static final int ORDINAL = 150;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        boolean endpoint = ENDPOINTS.stream().anyMatch(name -> configured(context.getValue(name)));
        return List.of(
                new PropertiesConfigSource(Map.of(SDK_DISABLED, String.valueOf(!endpoint)), "TracingSwitch", ORDINAL));
    }

    /** Set by someone, not only a default of Quarkus' config mapping (whose source has the lowest ordinal). */
    private static boolean configured(ConfigValue value) {
        return value != null
                && value.getValue() != null
                && !value.getValue().isBlank()
                && value.getConfigSourceOrdinal() > Integer.MIN_VALUE;
    }
}
