package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import com.payments.system.OtlpReceiver.ReceivedSpan;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: one trace from the merchant's {@code POST /v1/payments/{id}/refunds} to the PSP refund and its outcome,
 * across the packaged payments-api, outbox-relay and refunds-worker, each in its own process and exporting its spans
 * over OTLP/HTTP to a receiver of this test (psp-sandbox, PostgreSQL and Kafka are real too). The spans must share
 * one trace id, link parent to child across the processes, and come in the order of the table: the request's
 * server span, its SQL statements, the outbox row that keeps the context, the relay's producer span, the worker's
 * consumer span, the PSP refund call, the outcome's statements, and the outcome's own event published in the same
 * trace.
 */
class RefundTraceTest {
    private static final String KEY = "Bearer sk_test_demo_merchant_a";
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** Three JVMs start at once, on a machine of 2 cores that may be busy. */
    private static final Duration STARTUP = Duration.ofMinutes(5);

    private static final Pattern TRACEPARENT = Pattern.compile("00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}");

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void oneTraceFromTheMerchantsRefundThroughRelayAndWorkerToThePspAndTheOutcome() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("trace");
        recreateTopics();
        List<CompletableFuture<QuarkusProcess>> processes = new ArrayList<>();
        try (OtlpReceiver otlp = OtlpReceiver.start();
                PspSandbox psp = PspSandbox.start(Map.of());
                Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
            Map<String, String> common = new HashMap<>(Map.of(
                    "quarkus.datasource.reactive.url", db.reactiveUrl(),
                    "quarkus.datasource.username", db.user(),
                    "quarkus.datasource.password", db.password(),
                    "kafka.bootstrap.servers", Kafka.bootstrapServers(),
                    "psp.url", psp.url(),
                    // the setting that turns tracing on (TracingSwitch); spans leave within 100 ms
                    "quarkus.otel.exporter.otlp.traces.endpoint", otlp.endpoint(),
                    "quarkus.otel.exporter.otlp.traces.protocol", "http/protobuf",
                    "quarkus.otel.bsp.schedule.delay", "100ms"));
            Map<String, String> api = new HashMap<>(common);
            api.put("quarkus.profile", "dev"); // the demo merchants
            api.put("quarkus.datasource.jdbc.url", db.jdbcUrl());
            // started side by side: the three JVMs' start-ups overlap
            processes.add(CompletableFuture.supplyAsync(() -> start("payments-api", api)));
            processes.add(CompletableFuture.supplyAsync(() -> start("outbox-relay", common)));
            processes.add(CompletableFuture.supplyAsync(() -> start("refunds-worker", common)));
            CompletableFuture.allOf(processes.toArray(CompletableFuture[]::new)).get(6, TimeUnit.MINUTES);
            String apiUrl = processes.get(0).get().url();

            String paymentId = field(
                    send(
                                    apiUrl,
                                    "/v1/payments",
                                    "{\"orderId\":\"trace-1\",\"amount\":5000,\"currency\":\"EUR\","
                                            + "\"source\":\"tok_visa\"}")
                            .body(),
                    "id");
            HttpResponse<String> accepted = send(apiUrl, "/v1/payments/" + paymentId + "/refunds", "{\"amount\":1200}");
            assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
            String requestId = accepted.headers().firstValue("Request-Id").orElseThrow();
            String refundId = field(accepted.body(), "refundId");
            await().atMost(WAIT)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> field(get(apiUrl, "/v1/refunds/" + refundId).body(), "status"), "SUCCEEDED"::equals);

            // 1. the merchant's request: a server span of payments-api, found by the request id it answered with
            ReceivedSpan server = await().atMost(WAIT)
                    .until(
                            () -> otlp.spans().stream()
                                    .filter(s -> requestId.equals(s.attribute("payments.request_id")))
                                    .findFirst(),
                            Optional::isPresent)
                    .orElseThrow();
            String traceId = server.traceId();
            assertThat(server.service()).isEqualTo("payments-api");
            assertThat(server.kind()).isEqualTo(SpanKind.SPAN_KIND_SERVER);
            assertThat(server.name()).isEqualTo("POST /v1/payments/{id}/refunds");

            // the outcome's event (RefundSucceeded) is the last span of the trace to be exported: wait for it
            ReceivedSpan outcomeEvent = awaitSpan(
                    otlp,
                    traceId,
                    s -> s.kind() == SpanKind.SPAN_KIND_PRODUCER && s.name().equals("payment-events publish"));
            List<ReceivedSpan> trace = inTrace(otlp, traceId);
            String dump = trace.stream().map(ReceivedSpan::toString).collect(Collectors.joining("\n"));

            // 2. the request's SQL statements: client spans of payments-api under the server span
            List<ReceivedSpan> requestSql = trace.stream()
                    .filter(s -> s.service().equals("payments-api") && isSql(s))
                    .toList();
            assertThat(requestSql).as(dump).isNotEmpty();
            assertThat(requestSql).as(dump).allMatch(s -> descends(s, server, trace));

            // 3. the outbox row keeps the request's context
            Matcher stored = TRACEPARENT.matcher(outboxTraceparent(sql, "refund-commands", refundId));
            assertThat(stored.matches()).isTrue();
            assertThat(stored.group(1)).isEqualTo(traceId);
            ReceivedSpan writer = byId(trace, stored.group(2));
            assertThat(writer.service()).isEqualTo("payments-api");

            // 4. outbox-relay's producer span continues from the row
            ReceivedSpan producer = single(
                    trace,
                    s -> s.kind() == SpanKind.SPAN_KIND_PRODUCER && s.name().equals("refund-commands publish"),
                    dump);
            assertThat(producer.service()).isEqualTo("outbox-relay");
            assertThat(producer.parentSpanId()).isEqualTo(writer.spanId());

            // 5. refunds-worker's consumer span is the child of the producer span (the record's headers)
            ReceivedSpan consumer = single(trace, s -> s.kind() == SpanKind.SPAN_KIND_CONSUMER, dump);
            assertThat(consumer.service()).isEqualTo("refunds-worker");
            assertThat(consumer.name()).isEqualTo("refund-commands process");
            assertThat(consumer.parentSpanId()).isEqualTo(producer.spanId());
            assertThat(consumer.attribute("payments.refund_id")).isEqualTo(refundId);

            // 6. the PSP refund call: a client span under the consumer span
            ReceivedSpan pspCall = single(
                    trace,
                    s -> s.service().equals("refunds-worker")
                            && s.kind() == SpanKind.SPAN_KIND_CLIENT
                            && !isSql(s)
                            && s.name().startsWith("POST"),
                    dump);
            assertThat(descends(pspCall, consumer, trace)).as(dump).isTrue();

            // 7. the outcome's statements: SQL client spans of the worker under the consumer span, after the PSP call
            List<ReceivedSpan> outcomeSql = trace.stream()
                    .filter(s -> s.service().equals("refunds-worker") && isSql(s))
                    .filter(s -> s.startNanos() >= pspCall.endNanos())
                    .toList();
            assertThat(outcomeSql).as(dump).isNotEmpty();
            assertThat(outcomeSql).as(dump).allMatch(s -> descends(s, consumer, trace));

            // the worker's outbox row (RefundSucceeded) keeps its context too: the relay publishes it in this trace
            assertThat(TRACEPARENT
                            .matcher(outboxTraceparent(sql, "payment-events", refundId))
                            .replaceAll("$1"))
                    .isEqualTo(traceId);
            assertThat(byId(trace, outcomeEvent.parentSpanId()).service()).isEqualTo("refunds-worker");
            assertThat(descends(byId(trace, outcomeEvent.parentSpanId()), consumer, trace))
                    .as(dump)
                    .isTrue();

            // in the order of the table
            List<Long> starts = List.of(
                    server.startNanos(),
                    min(requestSql),
                    producer.startNanos(),
                    consumer.startNanos(),
                    pspCall.startNanos(),
                    min(outcomeSql),
                    outcomeEvent.startNanos());
            assertThat(starts).as(dump).isSorted();
            assertThat(trace.stream().map(ReceivedSpan::service).collect(Collectors.toSet()))
                    .containsExactlyInAnyOrder("payments-api", "outbox-relay", "refunds-worker");
        } finally {
            for (CompletableFuture<QuarkusProcess> process : processes) {
                try {
                    process.get(6, TimeUnit.MINUTES).stop();
                } catch (ExecutionException | TimeoutException e) {
                    // did not start: nothing to stop
                }
            }
        }
    }

    private static QuarkusProcess start(String module, Map<String, String> properties) {
        return QuarkusProcess.start(module, "256m", properties, STARTUP);
    }

    private static boolean isSql(ReceivedSpan span) {
        return span.kind() == SpanKind.SPAN_KIND_CLIENT
                && ("postgresql".equals(span.attribute("db.system"))
                        || "postgresql".equals(span.attribute("db.system.name")));
    }

    /** {@code span} is {@code ancestor} or below it, following the parents within the trace. */
    private static boolean descends(ReceivedSpan span, ReceivedSpan ancestor, List<ReceivedSpan> trace) {
        Map<String, ReceivedSpan> byId = trace.stream().collect(Collectors.toMap(ReceivedSpan::spanId, s -> s));
        for (ReceivedSpan s = span; s != null; s = byId.get(s.parentSpanId())) {
            if (s.spanId().equals(ancestor.spanId())) {
                return true;
            }
        }
        return false;
    }

    private static ReceivedSpan awaitSpan(OtlpReceiver otlp, String traceId, Predicate<ReceivedSpan> which) {
        return await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> inTrace(otlp, traceId).stream().filter(which).findFirst(), Optional::isPresent)
                .orElseThrow();
    }

    private static List<ReceivedSpan> inTrace(OtlpReceiver otlp, String traceId) {
        return otlp.spans().stream()
                .filter(s -> s.traceId().equals(traceId))
                .sorted(Comparator.comparingLong(ReceivedSpan::startNanos))
                .toList();
    }

    private static ReceivedSpan single(List<ReceivedSpan> trace, Predicate<ReceivedSpan> which, String dump) {
        List<ReceivedSpan> found = trace.stream().filter(which).toList();
        assertThat(found).as(dump).hasSize(1);
        return found.get(0);
    }

    private static ReceivedSpan byId(List<ReceivedSpan> trace, String spanId) {
        return trace.stream()
                .filter(s -> s.spanId().equals(spanId))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no span " + spanId + " in the trace"));
    }

    private static long min(List<ReceivedSpan> spans) {
        return spans.stream().mapToLong(ReceivedSpan::startNanos).min().orElseThrow();
    }

    /** The stored {@code traceparent} of the outbox row of this topic about this refund. */
    private static String outboxTraceparent(Connection sql, String topic, String refundId) throws Exception {
        try (PreparedStatement query = sql.prepareStatement(
                "SELECT headers->>'traceparent' FROM outbox WHERE topic = ? AND payload->>'refundId' = ?")) {
            query.setString(1, topic);
            query.setString(2, refundId);
            try (ResultSet rows = query.executeQuery()) {
                assertThat(rows.next()).as("outbox row of " + topic).isTrue();
                return rows.getString(1);
            }
        }
    }

    private HttpResponse<String> send(String base, String path, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", KEY)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String base, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", KEY)
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A top-level string field of a JSON object (the answers here are flat enough). */
    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        assertThat(m.find()).as(name + " in " + json).isTrue();
        return m.group(1);
    }

    /** Empty topics, so that the worker reads no record of an earlier test (their refunds are not in this database). */
    private static void recreateTopics() {
        Kafka.deleteAllTopics();
        try (Admin admin = Kafka.admin()) {
            for (String topic : List.of("refund-commands", "payment-events", "refund-commands-dlq")) {
                // the deletion completes at the broker asynchronously: "already exists" means it is still under way
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(250))
                        .until(() -> {
                            try {
                                admin.createTopics(List.of(new NewTopic(topic, 4, (short) 1)))
                                        .all()
                                        .get(60, TimeUnit.SECONDS);
                                return true;
                            } catch (ExecutionException e) {
                                if (e.getCause() instanceof TopicExistsException) {
                                    return false;
                                }
                                throw e;
                            }
                        });
            }
        }
    }
}
