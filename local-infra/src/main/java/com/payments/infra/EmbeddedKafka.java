package com.payments.infra;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/** A single-node KRaft broker and controller in this JVM, on free loopback ports and a temp log dir. */
final class EmbeddedKafka {

    /** The broker's own loggers, kept at WARNING (held here so that JUL keeps their level). */
    private static final List<Logger> BROKER_LOGGERS = Stream.of(
                    "kafka",
                    "state.change.logger",
                    "org.apache.kafka.controller",
                    "org.apache.kafka.coordinator",
                    "org.apache.kafka.image",
                    "org.apache.kafka.metadata",
                    "org.apache.kafka.raft",
                    "org.apache.kafka.server",
                    "org.apache.kafka.storage")
            .map(Logger::getLogger)
            .toList();

    private EmbeddedKafka() {}

    /** Formats the storage, starts the server, registers its shutdown and returns the bootstrap servers. */
    static String start() {
        quietBrokerLogs();
        try {
            Path logDir = Files.createTempDirectory("payments-kafka-");
            int brokerPort = freePort();
            int controllerPort = freePort();
            Properties props = config(logDir, brokerPort, controllerPort);
            format(logDir, props);

            KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(props), Time.SYSTEM);
            server.startup();
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                server.shutdown();
                                server.awaitShutdown();
                                deleteRecursively(logDir);
                            },
                            "embedded-kafka-stop"));
            String bootstrapServers = "127.0.0.1:" + brokerPort;
            awaitReady(bootstrapServers);
            return bootstrapServers;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start embedded Kafka", e);
        }
    }

    /** Keeps the broker's own loggers at WARNING. */
    static void quietBrokerLogs() {
        BROKER_LOGGERS.forEach(logger -> logger.setLevel(Level.WARNING));
    }

    static Properties config(Path logDir, int brokerPort, int controllerPort) {
        Properties props = new Properties();
        props.put("process.roles", "broker,controller");
        props.put("node.id", "1");
        props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        props.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("controller.listener.names", "CONTROLLER");
        props.put("inter.broker.listener.name", "PLAINTEXT");
        props.put("log.dirs", logDir.resolve("data").toString());
        props.put("num.partitions", "4");
        props.put("auto.create.topics.enable", "true");
        props.put("default.replication.factor", "1");
        props.put("min.insync.replicas", "1");
        props.put("offsets.topic.replication.factor", "1");
        props.put("offsets.topic.num.partitions", "4");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("share.coordinator.state.topic.replication.factor", "1");
        props.put("share.coordinator.state.topic.min.isr", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        return props;
    }

    /** Writes meta.properties and the bootstrap checkpoint, as {@code kafka-storage.sh format} does. */
    static void format(Path logDir, Properties props) throws IOException {
        Path file = logDir.resolve("server.properties");
        try (OutputStream out = Files.newOutputStream(file)) {
            props.store(out, "embedded Kafka");
        }
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        int status = StorageTool.execute(
                new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", file.toString()},
                new PrintStream(output, true, StandardCharsets.UTF_8));
        if (status != 0) {
            throw new IllegalStateException(
                    "Kafka storage format failed (" + status + "): " + output.toString(StandardCharsets.UTF_8));
        }
    }

    static void awaitReady(String bootstrapServers) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            admin.describeCluster().nodes().get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for embedded Kafka", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Embedded Kafka did not become ready on " + bootstrapServers, e);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // best effort: it is a temp dir
        }
    }
}
