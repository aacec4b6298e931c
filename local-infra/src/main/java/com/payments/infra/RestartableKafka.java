package com.payments.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node KRaft broker in this JVM that a test may stop and start again on the same ports and log dir
 * (records survive), for "broker down" tests. Independent of the shared {@link Kafka} broker; close it at the end.
 */
public final class RestartableKafka implements AutoCloseable {
    private final Path logDir;
    private final Properties props;
    private final String bootstrapServers;
    private KafkaRaftServer server;

    private RestartableKafka(Path logDir, Properties props, String bootstrapServers) {
        this.logDir = logDir;
        this.props = props;
        this.bootstrapServers = bootstrapServers;
    }

    /** Formats a fresh log dir on free loopback ports and starts the broker. */
    public static RestartableKafka start() {
        EmbeddedKafka.quietBrokerLogs();
        try {
            Path logDir = Files.createTempDirectory("payments-kafka-restartable-");
            int brokerPort = EmbeddedKafka.freePort();
            int controllerPort = EmbeddedKafka.freePort();
            Properties props = EmbeddedKafka.config(logDir, brokerPort, controllerPort);
            EmbeddedKafka.format(logDir, props);
            RestartableKafka kafka = new RestartableKafka(logDir, props, "127.0.0.1:" + brokerPort);
            kafka.startBroker();
            return kafka;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start a restartable Kafka", e);
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Stops the broker (controlled shutdown); its data stays on disk. */
    public synchronized void stopBroker() {
        if (server != null) {
            server.shutdown();
            server.awaitShutdown();
            server = null;
        }
    }

    /** Starts the broker again (or the first time) and returns once it answers. */
    public synchronized void startBroker() {
        if (server == null) {
            server = new KafkaRaftServer(new KafkaConfig(props), Time.SYSTEM);
            server.startup();
            EmbeddedKafka.awaitReady(bootstrapServers);
        }
    }

    @Override
    public void close() {
        stopBroker();
        EmbeddedKafka.deleteRecursively(logDir);
    }
}
