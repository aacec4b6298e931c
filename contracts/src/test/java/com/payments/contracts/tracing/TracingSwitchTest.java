package com.payments.contracts.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Tracing is off unless an OTLP endpoint is configured; an explicit quarkus.otel.sdk.disabled wins, also over the
 * runtime default Quarkus recorded at build time (a source of the lowest ordinal).
 */
class TracingSwitchTest {

    @Test
    void offWithoutAnEndpoint() {
        assertThat(sdkDisabled(Map.of())).contains(true);
    }

    @Test
    void onWithAnEndpoint() {
        assertThat(sdkDisabled(Map.of("quarkus.otel.exporter.otlp.endpoint", "http://collector:4317")))
                .contains(false);
        assertThat(sdkDisabled(Map.of("quarkus.otel.exporter.otlp.traces.endpoint", "http://collector:4318")))
                .contains(false);
    }

    @Test
    void aBlankEndpointIsNone() {
        assertThat(sdkDisabled(Map.of("quarkus.otel.exporter.otlp.endpoint", " ")))
                .contains(true);
    }

    @Test
    void anExplicitSettingWins() {
        assertThat(sdkDisabled(Map.of("quarkus.otel.sdk.disabled", "false"))).contains(false);
        assertThat(sdkDisabled(Map.of(
                        "quarkus.otel.sdk.disabled", "true",
                        "quarkus.otel.exporter.otlp.endpoint", "http://collector:4317")))
                .contains(true);
    }

    @Test
    void onWithAnEndpointOverTheDefaultRecordedAtBuildTime() {
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(
                        Map.of("quarkus.otel.exporter.otlp.endpoint", "http://collector:4317"), "env", 300))
                .withSources(new PropertiesConfigSource(Map.of(TracingSwitch.SDK_DISABLED, "true"), "build", 0))
                .withSources(new TracingSwitch())
                .build();
        assertThat(config.getValue(TracingSwitch.SDK_DISABLED, Boolean.class)).isFalse();
    }

    private static Optional<Boolean> sdkDisabled(Map<String, String> properties) {
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(properties, "test", 250))
                .withSources(new TracingSwitch())
                .build();
        return config.getOptionalValue(TracingSwitch.SDK_DISABLED, Boolean.class);
    }
}
