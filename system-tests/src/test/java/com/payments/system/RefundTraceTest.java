package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import com.payments.system.OtlpReceiver.ReceivedSpan;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
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
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * One trace from the merchant's {@code POST /v1/payments/{id}/refunds} to the PSP refund and its outcome, across the
 * packaged payments-api, outbox-relay and refunds-worker, each in its own process and exporting its spans over
 * OTLP/HTTP to a receiver of this test (psp-sandbox, PostgreSQL and Kafka are real too). The spans must share one
 * trace id, link parent to child across the processes, and come in the order of docs/operations.md's table: the
 * request's server span, its SQL statements, the outbox row that keeps the context, the relay's producer span, the
 * worker's consumer span, the PSP refund call, the outcome's statements, and the outcome's own event published in the
 * same trace. The other traced paths get a span each too: the capture, the resolver's re-sent charge, a PSP webhook
 * (whose JSON log line carries its trace, span and request ids) and a reconciliation run.
 */
class RefundTraceTest {
    private static final String OPERATOR_TOKEN = "trace-operator-token";
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** Three JVMs start at once, on a machine of 2 cores that may be busy. */
    private static final Duration STARTUP = Duration.ofMinutes(5);

    private static final Pattern TRACEPARENT = Pattern.compile("00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}");

    private static final String WEBHOOK_SECRET = "whsec_trace_secret";

    /** The merchant's {@code Authorization} value. */
    private String key;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void oneTraceFromTheMerchantsRefundThroughRelayAndWorkerToThePspAndTheOutcome() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("trace");
        Stack.recreateTopics();
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
                    // the settings docs/operations.md gives an operator: the endpoint turns tracing on
                    // (TracingSwitch); spans leave within 100 ms
                    "quarkus.otel.exporter.otlp.endpoint", otlp.endpoint(),
                    "quarkus.otel.exporter.otlp.protocol", "http/protobuf",
                    "quarkus.otel.bsp.schedule.delay", "100ms"));
            Map<String, String> api = new HashMap<>(common);
            // payments-api as in production (the prod profile, JSON logs), with an operator token to create a merchant
            api.put("payments.admin.token", OPERATOR_TOKEN);
            api.put("payments.webhooks.secret", WEBHOOK_SECRET);
            api.put("quarkus.datasource.jdbc.url", db.jdbcUrl());
            // the PSP charge's timeout of payments-api's tests (production: 2 s), for a loaded machine
            api.put("quarkus.fault-tolerance.\"com.payments.api.client.PspGateway/charge\".timeout.value", "5000");
            // started side by side: the three JVMs' start-ups overlap
            processes.add(CompletableFuture.supplyAsync(() -> start("payments-api", api)));
            processes.add(CompletableFuture.supplyAsync(() -> start("outbox-relay", common)));
            processes.add(CompletableFuture.supplyAsync(() -> start("refunds-worker", common)));
            CompletableFuture.allOf(processes.toArray(CompletableFuture[]::new)).get(6, TimeUnit.MINUTES);
            String apiUrl = processes.get(0).get().url();
            HttpResponse<String> merchant = http.send(
                    HttpRequest.newBuilder(URI.create(apiUrl + "/v1/admin/merchants"))
                            .timeout(Duration.ofSeconds(30))
                            .header("Authorization", "Bearer " + OPERATOR_TOKEN)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"trace-shop\"}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(merchant.statusCode()).as(merchant.body()).isEqualTo(201);
            key = "Bearer " + field(merchant.body(), "apiKey");
            // the first captures of a cold JVM can outlast the PSP timeout: go on once one is captured
            await().atMost(WAIT)
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> capture(apiUrl, "warm-" + UUID.randomUUID(), "tok_visa")
                                    .statusCode()
                            == 201);

            HttpResponse<String> captured = capture(apiUrl, "trace-1", "tok_visa");
            assertThat(captured.statusCode()).as(captured.body()).isEqualTo(201);
            String paymentId = field(captured.body(), "id");
            // the PSP never gets this charge: the payment stays UNKNOWN until the resolver re-sends it
            HttpResponse<String> lost = capture(apiUrl, "trace-2", "tok_timeoutNotReceived");
            assertThat(lost.statusCode()).as(lost.body()).isEqualTo(202);
            HttpResponse<String> accepted = send(apiUrl, "/v1/payments/" + paymentId + "/refunds", "{\"amount\":1200}");
            assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
            String requestId = accepted.headers().firstValue("Request-Id").orElseThrow();
            String refundId = field(accepted.body(), "refundId");
            await().atMost(WAIT)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> field(get(apiUrl, "/v1/refunds/" + refundId).body(), "status"), "SUCCEEDED"::equals);

            // 1. the merchant's request: a server span of payments-api, found by the request id it answered with
            ReceivedSpan server;
            try {
                server = serverSpanOf(otlp, accepted);
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                throw new AssertionError("no span with " + requestId + "; received: "
                        + otlp.spans().stream()
                                .collect(Collectors.groupingBy(
                                        s -> s.service() + " " + s.kind() + " " + s.name(), Collectors.counting())));
            }
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

            captureTrace(otlp, captured);
            resolverTrace(otlp, sql, apiUrl, field(lost.body(), "id"));
            webhookTraceAndLog(otlp, apiUrl, processes.get(0).get(), paymentId);
            reconciliationRun(otlp, db, common);
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

    /**
     * The capture: a server span with the PSP charge as a client span below it, and its {@code PaymentCaptured}
     * published by the relay in the same trace.
     */
    private static void captureTrace(OtlpReceiver otlp, HttpResponse<String> captured) {
        ReceivedSpan server = serverSpanOf(otlp, captured);
        assertThat(server.name()).isEqualTo("POST /v1/payments");
        ReceivedSpan published = awaitSpan(
                otlp,
                server.traceId(),
                s -> s.service().equals("outbox-relay") && s.name().equals("payment-events publish"));
        List<ReceivedSpan> trace = inTrace(otlp, server.traceId());
        String dump = dump(trace);
        ReceivedSpan charge = single(
                trace,
                s -> s.service().equals("payments-api") && s.kind() == SpanKind.SPAN_KIND_CLIENT && !isSql(s),
                dump);
        assertThat(charge.name()).as(dump).startsWith("POST");
        assertThat(descends(charge, server, trace)).as(dump).isTrue();
        assertThat(descends(byId(trace, published.parentSpanId()), server, trace))
                .as(dump)
                .isTrue();
    }

    /**
     * The resolver's run that re-sent the lost charge: a span of the scheduled job, the PSP look-up and the re-sent
     * charge as client spans below it, and the {@code PaymentCaptured} it wrote published by the relay in its trace.
     */
    private void resolverTrace(OtlpReceiver otlp, Connection sql, String apiUrl, String paymentId) throws Exception {
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(500))
                .until(() -> field(get(apiUrl, "/v1/payments/" + paymentId).body(), "status"), "CAPTURED"::equals);
        Matcher stored = TRACEPARENT.matcher(outboxTraceparent(sql, "payment-events", "paymentId", paymentId));
        assertThat(stored.matches()).isTrue();
        String traceId = stored.group(1);
        ReceivedSpan published = awaitSpan(
                otlp,
                traceId,
                s -> s.service().equals("outbox-relay") && s.name().equals("payment-events publish"));
        List<ReceivedSpan> trace = inTrace(otlp, traceId);
        String dump = dump(trace);
        ReceivedSpan run = trace.get(0);
        assertThat(run.service()).as(dump).isEqualTo("payments-api");
        assertThat(run.parentSpanId()).as(dump).isEmpty();
        assertThat(run.name()).as(dump).contains("payment-resolver");
        List<ReceivedSpan> pspCalls = trace.stream()
                .filter(s -> s.service().equals("payments-api") && s.kind() == SpanKind.SPAN_KIND_CLIENT && !isSql(s))
                .toList();
        assertThat(pspCalls).as(dump).anyMatch(s -> s.name().startsWith("GET")); // the look-up: not found
        assertThat(pspCalls).as(dump).anyMatch(s -> s.name().startsWith("POST")); // the re-sent charge
        assertThat(pspCalls).as(dump).allMatch(s -> descends(s, run, trace));
        assertThat(descends(byId(trace, published.parentSpanId()), run, trace))
                .as(dump)
                .isTrue();
    }

    /**
     * A signed PSP webhook: a server span with its statements below it, and its JSON log line carrying the trace id,
     * the span id and the request id of that request.
     */
    private void webhookTraceAndLog(OtlpReceiver otlp, String apiUrl, QuarkusProcess api, String paymentId)
            throws Exception {
        String eventId = "evt_trace_" + UUID.randomUUID();
        String event = "{\"id\":\"" + eventId + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_trace\","
                + "\"reference\":\"" + paymentId + "\",\"status\":\"succeeded\",\"amount\":5000,"
                + "\"currency\":\"EUR\",\"created\":\"2026-01-01T00:00:00.000Z\"}}";
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create(apiUrl + "/v1/psp/webhooks"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .header("Psp-Signature", signature(event))
                        .POST(HttpRequest.BodyPublishers.ofString(event))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        ReceivedSpan server = serverSpanOf(otlp, answer);
        assertThat(server.name()).isEqualTo("POST /v1/psp/webhooks");
        List<ReceivedSpan> trace = inTrace(otlp, server.traceId());
        assertThat(trace).as(dump(trace)).anyMatch(s -> isSql(s) && descends(s, server, trace));

        // its log line ("Webhook <id> charge.succeeded: <outcome>"), JSON as in production
        String requestId = answer.headers().firstValue("Request-Id").orElseThrow();
        JsonObject line = await().atMost(WAIT)
                .until(
                        () -> Files.readAllLines(api.log()).stream()
                                .filter(l -> l.startsWith("{") && l.contains(eventId))
                                .map(JsonObject::new)
                                .findFirst(),
                        Optional::isPresent)
                .orElseThrow();
        JsonObject mdc = line.getJsonObject("mdc");
        assertThat(mdc).as(line.encode()).isNotNull();
        assertThat(mdc.getString("requestId")).as(line.encode()).isEqualTo(requestId);
        assertThat(mdc.getString("traceId")).as(line.encode()).isEqualTo(server.traceId());
        assertThat(trace.stream().map(ReceivedSpan::spanId)).as(line.encode()).contains(mdc.getString("spanId"));
    }

    /**
     * The reconciler's run of today (its settlement lines from the sandbox through the PSP port, {@code psp.url} as the
     * other services): a {@code reconciliation run} span with the date, exported before it exits.
     */
    private static void reconciliationRun(OtlpReceiver otlp, Postgres.Database db, Map<String, String> common)
            throws Exception {
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        Map<String, String> properties = new HashMap<>(common);
        properties.put("quarkus.datasource.jdbc.url", db.jdbcUrl());
        Stack.Exit exit = Stack.runToExit(
                "reconciler", properties, List.of("--date=" + today, "--lookback=0", "--source=psp"), STARTUP);
        assertThat(exit.code()).as(Files.readString(exit.log())).isZero();
        ReceivedSpan run = await().atMost(WAIT)
                .until(
                        () -> otlp.spans().stream()
                                .filter(s -> s.service().equals("reconciler")
                                        && s.name().equals("reconciliation run"))
                                .findFirst(),
                        Optional::isPresent)
                .orElseThrow();
        assertThat(run.attribute("recon.date")).isEqualTo(today.toString());
    }

    /** The server span of the request that got this answer, found by its {@code Request-Id}. */
    private static ReceivedSpan serverSpanOf(OtlpReceiver otlp, HttpResponse<String> answer) {
        String requestId = answer.headers().firstValue("Request-Id").orElseThrow();
        ReceivedSpan server = await().atMost(WAIT)
                .until(
                        () -> otlp.spans().stream()
                                .filter(s -> requestId.equals(s.attribute("payments.request_id")))
                                .findFirst(),
                        Optional::isPresent)
                .orElseThrow();
        assertThat(server.service()).isEqualTo("payments-api");
        assertThat(server.kind()).isEqualTo(SpanKind.SPAN_KIND_SERVER);
        return server;
    }

    /** The {@code Psp-Signature} of this body now (docs/architecture.md §5). */
    private static String signature(String body) throws Exception {
        long t = System.currentTimeMillis() / 1000;
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(WEBHOOK_SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
        return "t=" + t + ",v1=" + HexFormat.of().formatHex(mac.doFinal(body.getBytes(StandardCharsets.UTF_8)));
    }

    private static String dump(List<ReceivedSpan> trace) {
        return trace.stream().map(ReceivedSpan::toString).collect(Collectors.joining("\n"));
    }

    private static boolean isSql(ReceivedSpan span) {
        // by the statement: Quarkus' reactive SQL client spans put the database's name in db.system
        return span.kind() == SpanKind.SPAN_KIND_CLIENT
                && (span.attribute("db.statement") != null || span.attribute("db.query.text") != null);
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
        return outboxTraceparent(sql, topic, "refundId", refundId);
    }

    /** The stored {@code traceparent} of the outbox row of this topic whose payload has this field and value. */
    private static String outboxTraceparent(Connection sql, String topic, String field, String value) throws Exception {
        try (PreparedStatement query = sql.prepareStatement(
                "SELECT headers->>'traceparent' FROM outbox WHERE topic = ? AND payload->>? = ?")) {
            query.setString(1, topic);
            query.setString(2, field);
            query.setString(3, value);
            try (ResultSet rows = query.executeQuery()) {
                assertThat(rows.next()).as("outbox row of " + topic).isTrue();
                return rows.getString(1);
            }
        }
    }

    private HttpResponse<String> send(String base, String path, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", key)
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> capture(String base, String orderId, String source) throws Exception {
        return send(
                base,
                "/v1/payments",
                "{\"orderId\":\"" + orderId + "\",\"amount\":5000,\"currency\":\"EUR\",\"source\":\"" + source + "\"}");
    }

    private HttpResponse<String> get(String base, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", key)
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A top-level string field of a JSON object (the answers here are flat enough). */
    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\"\\s*:\\s*\"([^\"]*)\"").matcher(json);
        assertThat(m.find()).as(name + " in " + json).isTrue();
        return m.group(1);
    }
}
