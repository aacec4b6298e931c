package com.payments.refunds.messaging;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The consumer span of a {@code refund-commands} record: a child of the producer span whose context outbox-relay put
 * in the record's headers, current while the record is processed, so that the PSP call and the outcome's statements
 * are its children. The record's work runs on a Vert.x context of its own (records are processed concurrently,
 * {@link KeyedLanes}), where the span stays current across the work's asynchronous steps. With tracing off the span is
 * a no-op.
 */
@ApplicationScoped
public class RecordTracing {
    /** Span attribute naming the refund a record is about (docs/operations.md, "Tracing"). */
    public static final String REFUND_ID = "payments.refund_id";

    private static final TextMapGetter<Headers> KAFKA_HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
            List<String> keys = new ArrayList<>();
            carrier.forEach(header -> keys.add(header.key()));
            return keys;
        }

        @Override
        public String get(Headers carrier, String key) {
            Header header = carrier == null ? null : carrier.lastHeader(key);
            return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final Vertx vertx;

    public RecordTracing(OpenTelemetry openTelemetry, Vertx vertx) {
        this.tracer = openTelemetry.getTracer("refunds-worker");
        this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
        this.vertx = vertx;
    }

    /** Runs {@code work} within a new consumer span of the record with these headers and key. */
    public Uni<Void> process(String topic, Headers headers, String key, Supplier<Uni<Void>> work) {
        Context parent = headers == null ? Context.root() : propagator.extract(Context.root(), headers, KAFKA_HEADERS);
        Span span = tracer.spanBuilder(topic + " process")
                .setParent(parent)
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute("messaging.system", "kafka")
                .setAttribute("messaging.operation", "process")
                .setAttribute("messaging.destination.name", topic)
                .setAttribute("messaging.kafka.message.key", key)
                .startSpan();
        io.vertx.core.Context own = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
        return Uni.createFrom()
                .<Void>emitter(emitter -> own.runOnContext(ignored -> {
                    // Not closed: this context is the record's alone and is dropped with it.
                    parent.with(span).makeCurrent();
                    work.get().subscribe().with(emitter::complete, emitter::fail);
                }))
                .onFailure()
                .invoke(failure ->
                        span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName()))
                .onTermination()
                .invoke(span::end);
    }
}
