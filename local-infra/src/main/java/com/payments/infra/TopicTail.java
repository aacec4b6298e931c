package com.payments.infra;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Prints a topic from its beginning, one record per line ({@code partition/offset key value}), for humans and the
 * local-stack smoke test. Usage: {@code TopicTail TOPIC [SECONDS [end]]} — with SECONDS it stops after that long,
 * otherwise it follows the topic until killed; with {@code end} it stops earlier, as soon as it has printed every record
 * up to the topic's end offsets (asked again when reached, so that records produced meanwhile are printed too). The
 * broker comes from {@code PAYMENTS_KAFKA_BOOTSTRAP_SERVERS}.
 */
public final class TopicTail {
    private TopicTail() {}

    public static void main(String[] args) {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        if (args.length < 1 || (args.length > 2 && !"end".equals(args[2]))) {
            System.err.println("usage: TopicTail TOPIC [SECONDS [end]]");
            System.exit(2);
        }
        long deadline = args.length > 1
                ? System.nanoTime()
                        + Duration.ofSeconds(Long.parseLong(args[1])).toNanos()
                : Long.MAX_VALUE;
        boolean toEnd = args.length > 2;
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                Kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "topic-tail-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false);
        try (var consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(args[0]));
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    System.out.println(
                            record.partition() + "/" + record.offset() + " " + record.key() + " " + record.value());
                }
                System.out.flush();
                if (toEnd && atEnd(consumer, args[0])) {
                    return;
                }
            }
        }
    }

    /** Whether the consumer holds every partition of the topic and has read each up to its current end offset. */
    private static boolean atEnd(KafkaConsumer<String, String> consumer, String topic) {
        var assigned = consumer.assignment();
        int partitions = consumer.partitionsFor(topic).size();
        if (partitions == 0 || assigned.size() != partitions) {
            return false;
        }
        Map<TopicPartition, Long> ends = consumer.endOffsets(assigned);
        return assigned.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
    }
}
