package com.payments.infra;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.testcontainers.kafka.KafkaContainer;

/**
 * One real Kafka 4.x broker per JVM.
 *
 * <p>Where the broker comes from, checked in this order:
 *
 * <ol>
 *   <li>{@code PAYMENTS_KAFKA_BOOTSTRAP_SERVERS} set: an external broker;
 *   <li>{@code PAYMENTS_INFRA=testcontainers}: an {@code apache/kafka:4.1.2} container;
 *   <li>otherwise: an in-process single-node KRaft broker and controller ({@link EmbeddedKafka}),
 *       started on first use and stopped at JVM exit.
 * </ol>
 */
public final class Kafka {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Kafka() {}

    /** The {@code bootstrap.servers} value of the broker, started on the first call. */
    public static String bootstrapServers() {
        return Holder.BOOTSTRAP_SERVERS;
    }

    /** Deletes every non-internal topic and returns once the broker no longer lists any of them. */
    public static void deleteAllTopics() {
        try (Admin admin = admin()) {
            Set<String> topics = admin.listTopics().names().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (topics.isEmpty()) {
                return;
            }
            admin.deleteTopics(topics).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (admin.listTopics().names().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).stream()
                    .anyMatch(topics::contains)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Topics still listed after deletion: " + topics);
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while deleting topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Cannot delete topics on " + bootstrapServers(), e);
        }
    }

    /** An admin client for the broker; the caller closes it. */
    public static Admin admin() {
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                (int) TIMEOUT.toMillis()));
    }

    private static final class Holder {
        static final String BOOTSTRAP_SERVERS = start();
    }

    private static String start() {
        String external = System.getenv("PAYMENTS_KAFKA_BOOTSTRAP_SERVERS");
        if (external != null && !external.isBlank()) {
            return external;
        }
        if ("testcontainers".equals(System.getenv("PAYMENTS_INFRA"))) {
            return startContainer();
        }
        // Kept per JVM (not per class loader) for the same reason as the embedded PostgreSQL.
        String running = System.getProperty("com.payments.infra.embedded-kafka.bootstrap");
        if (running == null) {
            running = EmbeddedKafka.start();
            System.setProperty("com.payments.infra.embedded-kafka.bootstrap", running);
        }
        return running;
    }

    private static String startContainer() {
        KafkaContainer container = new KafkaContainer("apache/kafka:4.1.2")
                .withEnv("KAFKA_NUM_PARTITIONS", "4")
                .withEnv("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "true")
                .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
        container.start();
        Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "kafka-container-stop"));
        return container.getBootstrapServers();
    }
}
