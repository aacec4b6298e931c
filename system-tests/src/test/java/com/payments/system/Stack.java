package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.QuarkusProcess;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The packaged services of this repository for a system test, each in its own process ({@link QuarkusProcess}) on one
 * database of its own ({@link Postgres#freshDatabase}), the broker ({@link Kafka}) and a psp-sandbox; webhook-delivery
 * sends to receivers on loopback.
 */
final class Stack {
    static final List<String> TOPICS = List.of("refund-commands", "payment-events", "refund-commands-dlq");

    private Stack() {}

    /** The connection settings every service takes for this database. */
    static Map<String, String> datasource(Postgres.Database db) {
        return Map.of(
                "quarkus.datasource.reactive.url", db.reactiveUrl(),
                "quarkus.datasource.username", db.user(),
                "quarkus.datasource.password", db.password());
    }

    /**
     * payments-api in its {@code test} profile, as payments-api's own tests run it: the demo merchants (docs/api.md's
     * test keys), the operator token {@code test-operator-token}, the sandbox's webhook secret, short PSP timeouts, and
     * no resolver runs of its own; no tracing. {@code more} adds or overrides settings.
     */
    static QuarkusProcess paymentsApi(Postgres.Database db, String pspUrl, Map<String, String> more) {
        Map<String, String> properties = new HashMap<>(datasource(db));
        properties.put("quarkus.datasource.jdbc.url", db.jdbcUrl());
        properties.put("quarkus.profile", "test");
        properties.put("psp.url", pspUrl);
        // the test profile turns tracing on for in-process tests, which export nowhere; a process would export to
        // localhost:4317 (RefundTraceTest gives its services a receiver instead)
        properties.put("quarkus.otel.sdk.disabled", "true");
        properties.putAll(more);
        return QuarkusProcess.start("payments-api", "256m", properties);
    }

    /**
     * webhook-delivery as its own tests run it (docs/webhook-delivery.md, "Settings"): plain http receivers on
     * loopback admitted (PAYMENTS_WEBHOOKS_ALLOW_HTTP / _ALLOW_LOOPBACK, never so in production), due deliveries leased
     * every 100 ms and a failed attempt retried within a second; plain-text logs. {@code more} adds or overrides
     * settings.
     */
    static QuarkusProcess webhookDelivery(Postgres.Database db, String bootstrap, Map<String, String> more) {
        Map<String, String> properties = new HashMap<>(datasource(db));
        properties.put("kafka.bootstrap.servers", bootstrap);
        properties.put("payments.webhooks.allow-http", "true");
        properties.put("payments.webhooks.allow-loopback", "true");
        properties.put("payments.webhooks.poll-interval", "100ms");
        properties.put("payments.webhooks.schedule", "300ms,600ms,1s");
        properties.put("payments.webhooks.lease", "15s");
        properties.put("payments.webhooks.timeout", "8s");
        properties.put("quarkus.log.console.json.enabled", "false");
        properties.put("quarkus.log.level", "WARN");
        properties.putAll(more);
        return QuarkusProcess.start("webhook-delivery", "256m", properties);
    }

    /** The end of a command-mode application's run: its exit code and its output. */
    record Exit(int code, Path log) {}

    /**
     * Runs the packaged command-mode application {@code module} (the reconciler) with these system properties and
     * arguments to its end, at most {@code within}.
     */
    static Exit runToExit(String module, Map<String, String> properties, List<String> args, Duration within)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(
                List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m"));
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.add("-jar");
        command.add(jar(module).toString());
        command.addAll(args);
        Path log = Files.createTempFile(module + "-", ".log");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError(module + " still running after " + within + "; see " + log);
        }
        return new Exit(process.exitValue(), log);
    }

    /** {@code module}'s packaged jar, found from the working directory upwards (the reactor packaged it). */
    private static Path jar(String module) {
        String relative = module + "/target/quarkus-app/quarkus-run.jar";
        for (File dir = new File("").getAbsoluteFile(); dir != null; dir = dir.getParentFile()) {
            Path candidate = dir.toPath().resolve(relative);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("No " + relative + ": package it first");
    }

    /** Stops these processes, the last started first, and forgets them. */
    static void stopAll(List<? extends AutoCloseable> processes) throws Exception {
        for (int i = processes.size() - 1; i >= 0; i--) {
            processes.get(i).close();
        }
        processes.clear();
    }

    /**
     * Empty topics, created before any service subscribes: no service reads a record of an earlier test class (whose
     * rows are in another database), and a consumer need not wait for a metadata refresh to see its topic.
     */
    static void recreateTopics() {
        Kafka.deleteAllTopics();
        try (Admin admin = Kafka.admin()) {
            for (String topic : TOPICS) {
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

    /**
     * Reads {@code payment-events} from the start until it holds {@code expected} events of this type for the
     * payment (within {@code within}), and asserts it holds no more.
     */
    static List<JsonObject> paymentEvents(
            String bootstrap, UUID paymentId, String type, int expected, Duration within) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                StringDeserializer.class.getName(),
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                "false");
        List<JsonObject> found = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            await().atMost(within).pollInterval(Duration.ofMillis(200)).until(() -> {
                List<TopicPartition> partitions = consumer.partitionsFor("payment-events").stream()
                        .map(p -> new TopicPartition(p.topic(), p.partition()))
                        .toList();
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                found.clear();
                Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
                while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        JsonObject event = new JsonObject(r.value());
                        if (paymentId.toString().equals(r.key()) && type.equals(event.getString("type"))) {
                            found.add(event);
                        }
                    }
                }
                return found.size() >= expected;
            });
        }
        assertThat(found).as(type + " on payment-events").hasSize(expected);
        return found;
    }
}
