package com.payments.system;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPInputStream;

/**
 * An OTLP/HTTP trace receiver on loopback, in memory: it decodes the protobuf {@code ExportTraceServiceRequest}s that
 * the services' exporters POST to {@code /v1/traces} ({@code quarkus.otel.exporter.otlp.traces.protocol=http/protobuf})
 * and keeps every span with the {@code service.name} of its resource. An exporter whose export timed out sends the
 * batch again, so a span already received (same trace and span id) is kept once.
 */
final class OtlpReceiver implements AutoCloseable {
    /** A received span; ids in lower-case hex, the parent's empty for a root span. */
    record ReceivedSpan(
            String service,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            Span.SpanKind kind,
            long startNanos,
            long endNanos,
            Map<String, String> attributes) {

        String attribute(String key) {
            return attributes.get(key);
        }

        @Override
        public String toString() {
            return service + " " + kind + " '" + name + "' trace=" + traceId + " span=" + spanId + " parent="
                    + parentSpanId + " " + attributes;
        }
    }

    private static final HexFormat HEX = HexFormat.of();

    private final HttpServer server;
    private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
    private final Set<String> received = ConcurrentHashMap.newKeySet();

    private OtlpReceiver(HttpServer server) {
        this.server = server;
    }

    static OtlpReceiver start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            OtlpReceiver receiver = new OtlpReceiver(server);
            server.createContext("/v1/traces", receiver::export);
            server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(4));
            server.start();
            return receiver;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The base URL to give the exporters; they POST to {@code /v1/traces} under it. */
    String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<ReceivedSpan> spans() {
        return List.copyOf(spans);
    }

    private void export(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] bytes = exchange.getRequestBody().readAllBytes();
            InputStream body = new java.io.ByteArrayInputStream(bytes);
            if ("gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
                body = new GZIPInputStream(body);
            }
            ExportTraceServiceRequest request;
            try {
                request = ExportTraceServiceRequest.parseFrom(body);
            } catch (IOException | RuntimeException | LinkageError e) {
                // Said aloud: the JDK server would drop the exchange silently and the test would only see no spans.
                System.err.println("OTLP receiver: undecodable export of " + bytes.length + " bytes: " + e);
                exchange.sendResponseHeaders(400, -1);
                return;
            }
            for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
                String service = attributes(resourceSpans.getResource()).get("service.name");
                for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
                    for (Span span : scopeSpans.getSpansList()) {
                        String traceId = HEX.formatHex(span.getTraceId().toByteArray());
                        String spanId = HEX.formatHex(span.getSpanId().toByteArray());
                        if (!received.add(traceId + "/" + spanId)) {
                            continue;
                        }
                        spans.add(new ReceivedSpan(
                                service,
                                traceId,
                                spanId,
                                HEX.formatHex(span.getParentSpanId().toByteArray()),
                                span.getName(),
                                span.getKind(),
                                span.getStartTimeUnixNano(),
                                span.getEndTimeUnixNano(),
                                attributes(span.getAttributesList())));
                    }
                }
            }
            byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
            if (answer.length > 0) {
                exchange.getResponseBody().write(answer);
            }
        }
    }

    private static Map<String, String> attributes(Resource resource) {
        return attributes(resource.getAttributesList());
    }

    private static Map<String, String> attributes(List<KeyValue> keyValues) {
        Map<String, String> attributes = new HashMap<>();
        for (KeyValue kv : keyValues) {
            AnyValue value = kv.getValue();
            attributes.put(
                    kv.getKey(),
                    switch (value.getValueCase()) {
                        case STRING_VALUE -> value.getStringValue();
                        case INT_VALUE -> Long.toString(value.getIntValue());
                        case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
                        case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
                        default -> value.toString();
                    });
        }
        return attributes;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
