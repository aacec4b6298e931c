package com.payments.refunds.service;

import com.payments.refunds.repository.RefundRepository;
import io.quarkus.logging.Log;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refreshes the gauges of {@link RefundsMetrics} that live outside the process: the PENDING refunds (one indexed
 * query on the reactive pool) and the number of records in the dead-letter topic (end minus start offsets per
 * partition, through the Kafka admin client's own thread). Nothing here blocks the event loop.
 */
@ApplicationScoped
public class RefundsGauges {
    private final Pool pool;
    private final RefundRepository refunds;
    private final RefundsMetrics metrics;
    private final String dlqTopic;
    private final Map<String, Object> kafkaConfig;
    private Admin admin;

    public RefundsGauges(
            Pool pool,
            RefundRepository refunds,
            RefundsMetrics metrics,
            @ConfigProperty(name = "mp.messaging.incoming.refund-commands.dead-letter-queue.topic") String dlqTopic,
            @Identifier("default-kafka-broker") Map<String, Object> kafkaConfig) {
        this.pool = pool;
        this.refunds = refunds;
        this.metrics = metrics;
        this.dlqTopic = dlqTopic;
        this.kafkaConfig = kafkaConfig;
    }

    @Scheduled(
            identity = "refunds-gauges",
            every = "${refunds.metrics.every:30s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        return refresh().onFailure().recoverWithItem(e -> {
            Log.warnf("refunds gauges not refreshed (next run retries): %s", e.toString());
            return null;
        });
    }

    /** Reads both sources once and updates the gauges. */
    public Uni<Void> refresh() {
        Uni<Void> pending = refunds.pendingSnapshot(pool)
                .invoke(snapshot -> metrics.pending(snapshot.count(), snapshot.oldestSeconds()))
                .replaceWithVoid();
        Uni<Void> dlq = dlqRecords().invoke(metrics::dlqRecords).replaceWithVoid();
        return Uni.join().all(pending, dlq).andFailFast().replaceWithVoid();
    }

    private Uni<Long> dlqRecords() {
        Admin client = admin();
        return uni(client.describeTopics(List.of(dlqTopic)).allTopicNames())
                .flatMap(topics -> {
                    List<TopicPartition> partitions = topics.get(dlqTopic).partitions().stream()
                            .map(p -> new TopicPartition(dlqTopic, p.partition()))
                            .toList();
                    Uni<Map<TopicPartition, ListOffsetsResultInfo>> earliest =
                            uni(client.listOffsets(offsets(partitions, OffsetSpec.earliest()))
                                    .all());
                    Uni<Map<TopicPartition, ListOffsetsResultInfo>> latest =
                            uni(client.listOffsets(offsets(partitions, OffsetSpec.latest()))
                                    .all());
                    return Uni.combine().all().unis(earliest, latest).with((start, end) -> partitions.stream()
                            .mapToLong(p -> end.get(p).offset() - start.get(p).offset())
                            .sum());
                })
                // No dead-letter topic yet: nothing was ever dead-lettered.
                .onFailure(RefundsGauges::unknownTopic)
                .recoverWithItem(0L);
    }

    private static boolean unknownTopic(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof UnknownTopicOrPartitionException) {
                return true;
            }
        }
        return false;
    }

    private static Map<TopicPartition, OffsetSpec> offsets(List<TopicPartition> partitions, OffsetSpec spec) {
        return partitions.stream().collect(Collectors.toMap(Function.identity(), p -> spec));
    }

    private static <T> Uni<T> uni(KafkaFuture<T> future) {
        return Uni.createFrom().completionStage(future.toCompletionStage());
    }

    private synchronized Admin admin() {
        if (admin == null) {
            Map<String, Object> config = new HashMap<>(kafkaConfig);
            config.put(AdminClientConfig.CLIENT_ID_CONFIG, "refunds-worker-gauges");
            admin = Admin.create(config);
        }
        return admin;
    }

    @PreDestroy
    synchronized void close() {
        if (admin != null) {
            // A refresh in flight is not worth the wait: with a broker gone its call held the shutdown until its own
            // timeout (60 s; 27 s of one fault-suite teardown).
            admin.close(Duration.ZERO);
        }
    }
}
