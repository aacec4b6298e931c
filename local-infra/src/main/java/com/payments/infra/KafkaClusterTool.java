package com.payments.infra;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The broker-loss scenario's view of a Kafka cluster (scripts/fault-broker-loss.sh, docs/fault-suite.md). The cluster
 * comes from {@code PAYMENTS_KAFKA_BOOTSTRAP_SERVERS}. Commands:
 *
 * <ul>
 *   <li>{@code topics RF MIN_ISR PARTITIONS TOPIC...}: creates the topics (an existing one is left as it is) and waits
 *       until every partition has a leader;
 *   <li>{@code leader TOPIC}: prints the node that leads most partitions of TOPIC (the lowest id on a tie);
 *   <li>{@code describe TOPIC}: one line per partition: {@code partition leader=N replicas=[..] isr=[..]};
 *   <li>{@code lag INTERVAL_MS GROUP...}: every INTERVAL_MS, {@code <epoch ms> <total lag>} of the groups (end offset
 *       minus committed offset, over the partitions of the topics they commit), until killed; once with 0;
 *   <li>{@code probe ACKS SECONDS TOPIC}: sends numbered records at full speed with {@code acks=ACKS} (the relay's
 *       settings otherwise; idempotence only with {@code all}, as Kafka requires), prints {@code sending} at the first
 *       acknowledgement and goes on for SECONDS, then reads TOPIC back and prints {@code acked=N found=M lost=L}: L
 *       acknowledged records are not on the topic.
 * </ul>
 */
public final class KafkaClusterTool {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** A lag sample not answered within this is printed as unknown (the next one counts). */
    private static final Duration SAMPLE_TIMEOUT = Duration.ofSeconds(10);

    private KafkaClusterTool() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        if (args.length < 2) {
            System.err.println("usage: KafkaClusterTool topics|leader|describe|lag|probe ARGS (see the class comment)");
            System.exit(2);
        }
        try (Admin admin = Kafka.admin()) {
            switch (args[0]) {
                case "topics" -> topics(admin, args);
                case "leader" -> System.out.println(leader(describe(admin, args[1])));
                case "describe" ->
                    describe(admin, args[1])
                            .partitions()
                            .forEach(p -> System.out.println(p.partition() + " leader="
                                    + (p.leader() == null ? "none" : p.leader().id()) + " replicas="
                                    + ids(p.replicas()) + " isr=" + ids(p.isr())));
                case "lag" -> lag(admin, Long.parseLong(args[1]), List.of(args).subList(2, args.length));
                case "probe" -> probe(args[1], Integer.parseInt(args[2]), args[3]);
                default -> {
                    System.err.println("unknown command " + args[0]);
                    System.exit(2);
                }
            }
        }
    }

    private static void topics(Admin admin, String[] args) throws Exception {
        short rf = Short.parseShort(args[1]);
        String minIsr = args[2];
        int partitions = Integer.parseInt(args[3]);
        for (String topic : List.of(args).subList(4, args.length)) {
            NewTopic newTopic = new NewTopic(topic, partitions, rf).configs(Map.of("min.insync.replicas", minIsr));
            try {
                admin.createTopics(List.of(newTopic)).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (describeOrNull(admin, topic) == null
                    || describe(admin, topic).partitions().stream().anyMatch(p -> p.leader() == null)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no leader for every partition of " + topic);
                }
                Thread.sleep(200);
            }
        }
    }

    private static TopicDescription describeOrNull(Admin admin, String topic) {
        try {
            return describe(admin, topic);
        } catch (Exception e) {
            return null;
        }
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic))
                .allTopicNames()
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)
                .get(topic);
    }

    static int leader(TopicDescription topic) {
        Map<Integer, Integer> led = new TreeMap<>();
        for (TopicPartitionInfo p : topic.partitions()) {
            if (p.leader() != null) {
                led.merge(p.leader().id(), 1, Integer::sum);
            }
        }
        // TreeMap: ascending ids, so the first of the most-leading nodes wins a tie
        int best = -1;
        int most = 0;
        for (var entry : led.entrySet()) {
            if (entry.getValue() > most) {
                best = entry.getKey();
                most = entry.getValue();
            }
        }
        if (best < 0) {
            throw new IllegalStateException("no partition of " + topic.name() + " has a leader");
        }
        return best;
    }

    private static List<Integer> ids(Collection<org.apache.kafka.common.Node> nodes) {
        return nodes.stream().map(org.apache.kafka.common.Node::id).toList();
    }

    private static void lag(Admin admin, long intervalMs, List<String> groups) throws InterruptedException {
        while (true) {
            try {
                long lag = 0;
                for (String group : groups) {
                    Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                            .partitionsToOffsetAndMetadata()
                            .get(SAMPLE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    Set<String> topics = new HashSet<>();
                    committed.keySet().forEach(tp -> topics.add(tp.topic()));
                    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                    for (String topic : topics) {
                        describe(admin, topic)
                                .partitions()
                                .forEach(
                                        p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
                    }
                    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends =
                            admin.listOffsets(latest).all().get(SAMPLE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    for (var end : ends.entrySet()) {
                        OffsetAndMetadata at = committed.get(end.getKey());
                        lag += end.getValue().offset() - (at == null ? 0 : at.offset());
                    }
                }
                System.out.println(System.currentTimeMillis() + " " + lag);
                if (intervalMs == 0) {
                    return;
                }
            } catch (Exception e) {
                // a sample missed while the cluster elects new leaders: the next one counts
                System.out.println(System.currentTimeMillis() + " unknown");
                if (intervalMs == 0) {
                    return;
                }
            }
            System.out.flush();
            Thread.sleep(intervalMs);
        }
    }

    private static void probe(String acks, int seconds, String topic) throws InterruptedException {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, Kafka.bootstrapServers());
        config.put(ProducerConfig.ACKS_CONFIG, acks);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks));
        config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        BitSet acked = new BitSet();
        int sent = 0;
        int refused = 0;
        long deadline = Long.MAX_VALUE;
        try (var producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            while (System.nanoTime() < deadline) {
                int number = sent++;
                String value = Integer.toString(number);
                try {
                    producer.send(new ProducerRecord<>(topic, value, value), (metadata, failure) -> {
                        if (failure == null) {
                            synchronized (acked) {
                                acked.set(number);
                            }
                        }
                    });
                } catch (RuntimeException e) {
                    refused++; // no metadata or a full buffer while the leader moves: the next send tries again
                }
                if (deadline == Long.MAX_VALUE && number % 1000 == 0) {
                    producer.flush();
                    boolean started;
                    synchronized (acked) {
                        started = !acked.isEmpty();
                    }
                    if (started) {
                        // the clock starts at the first acknowledgement (a JVM may start slowly on a busy machine)
                        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                        System.out.println("sending");
                        System.out.flush();
                    }
                }
            }
            producer.flush();
        }
        BitSet found = new BitSet();
        Map<String, Object> consumerConfig = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                Kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "probe-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false);
        try (var consumer = new KafkaConsumer<>(consumerConfig, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long readDeadline = System.nanoTime() + TIMEOUT.toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))
                    && System.nanoTime() < readDeadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    found.set(Integer.parseInt(record.value()));
                }
            }
        }
        BitSet lost = (BitSet) acked.clone();
        lost.andNot(found);
        System.out.println("acks=" + acks + " sent=" + sent + " refused=" + refused + " acked=" + acked.cardinality()
                + " found=" + found.cardinality() + " lost=" + lost.cardinality());
    }
}
