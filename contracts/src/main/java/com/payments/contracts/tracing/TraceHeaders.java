package com.payments.contracts.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashMap;
import java.util.Map;

/**
 * The W3C trace context ({@code traceparent}, {@code tracestate}) as string headers, through the OpenTelemetry
 * propagators: every writer of the {@code outbox} stores the current context in the row's {@code headers}, and
 * outbox-relay continues the trace from there into the Kafka record's headers. With tracing off
 * ({@code quarkus.otel.sdk.disabled}, see {@link TracingSwitch}) the propagators are no-ops: no headers, no cost.
 */
@ApplicationScoped
public class TraceHeaders {
    private static final TextMapGetter<Map<String, String>> MAP_GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final TextMapPropagator propagator;

    public TraceHeaders(OpenTelemetry openTelemetry) {
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
    }

    /** The current context (the span of the request, record or job running now); empty when there is none. */
    public Map<String, String> current() {
        return of(Context.current());
    }

    /** {@code context} as headers; empty when it has no valid span or tracing is off. */
    public Map<String, String> of(Context context) {
        Map<String, String> headers = new HashMap<>(4);
        propagator.inject(context, headers, Map::put);
        return headers;
    }

    /** The context stored in {@code headers} (a parent for the next span); the root context when none is stored. */
    public Context extract(Map<String, String> headers) {
        return propagator.extract(Context.root(), headers, MAP_GETTER);
    }
}
