package com.payments.infra;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Sends one record to a topic and prints where it went ({@code partition/offset}), for the local stack's scripts
 * (e.g. a refund command the worker must dead-letter, in the console's browser test). Usage: {@code TopicSend TOPIC
 * KEY VALUE}. The broker comes from {@code PAYMENTS_KAFKA_BOOTSTRAP_SERVERS}.
 */
public final class TopicSend {
    private TopicSend() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        if (args.length != 3) {
            System.err.println("usage: TopicSend TOPIC KEY VALUE");
            System.exit(2);
        }
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, Kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all");
        try (var producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            RecordMetadata sent = producer.send(new ProducerRecord<>(args[0], args[1], args[2]))
                    .get(60, TimeUnit.SECONDS);
            System.out.println(sent.partition() + "/" + sent.offset());
        }
    }
}
