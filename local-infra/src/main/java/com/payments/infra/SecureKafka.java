package com.payments.infra;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node KRaft broker in this JVM whose client listener is {@code SASL_SSL} with SCRAM-SHA-512 (as the
 * strimzi-cnpg overlay's listener), with ACLs enforced (StandardAuthorizer). The TLS certificate (for 127.0.0.1) and
 * the truststore are generated with the JDK's {@code keytool} in a temp directory. A second client listener,
 * {@link #mtlsBootstrapServers()}, is {@code SSL} with {@code ssl.client.auth=required} (mTLS): a client logs in with
 * a certificate issued by a test CA ({@link #mtlsClientSettings}), its principal the certificate's CN, under the same
 * ACLs. A plaintext listener on loopback serves the broker itself and {@link #admin()} (a super user). Close it at the
 * end.
 */
public final class SecureKafka implements AutoCloseable {
    private static final String STORE_PASSWORD = "changeit-" + UUID.randomUUID();
    private static final String ADMIN_USER = "ANONYMOUS"; // the plaintext listener's principal

    private final Path dir;
    private final KafkaRaftServer server;
    private final String bootstrapServers;
    private final String adminBootstrapServers;
    private final Path truststore;
    private final String mtlsBootstrapServers;

    private SecureKafka(
            Path dir,
            KafkaRaftServer server,
            String bootstrapServers,
            String adminBootstrapServers,
            Path truststore,
            String mtlsBootstrapServers) {
        this.dir = dir;
        this.server = server;
        this.bootstrapServers = bootstrapServers;
        this.adminBootstrapServers = adminBootstrapServers;
        this.truststore = truststore;
        this.mtlsBootstrapServers = mtlsBootstrapServers;
    }

    /** Generates the certificate, formats a fresh log dir on free loopback ports and starts the broker. */
    public static SecureKafka start() {
        EmbeddedKafka.quietBrokerLogs();
        try {
            Path dir = Files.createTempDirectory("payments-kafka-secure-");
            Path keystore = dir.resolve("broker.p12");
            Path truststore = dir.resolve("truststore.p12");
            genKeyPair(keystore, "broker", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1,dns:localhost");
            Path cert = dir.resolve("broker.crt");
            exportCert(keystore, "broker", cert);
            importCert(truststore, "broker", cert);

            // The test CA that issues the mTLS listener's client certificates; the listener trusts it alone.
            Path ca = dir.resolve("client-ca.p12");
            genKeyPair(ca, "ca", "CN=payments-test-client-ca", "-ext", "bc:c");
            Path caCert = dir.resolve("client-ca.crt");
            exportCert(ca, "ca", caCert);
            Path clientTruststore = dir.resolve("client-ca-truststore.p12");
            importCert(clientTruststore, "ca", caCert);

            int securePort = EmbeddedKafka.freePort();
            int mtlsPort = EmbeddedKafka.freePort();
            int plainPort = EmbeddedKafka.freePort();
            int controllerPort = EmbeddedKafka.freePort();
            Properties props = EmbeddedKafka.config(dir, plainPort, controllerPort);
            props.put(
                    "listeners",
                    "PLAINTEXT://127.0.0.1:" + plainPort + ",SECURE://127.0.0.1:" + securePort + ",MTLS://127.0.0.1:"
                            + mtlsPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
            props.put(
                    "advertised.listeners",
                    "PLAINTEXT://127.0.0.1:" + plainPort + ",SECURE://127.0.0.1:" + securePort + ",MTLS://127.0.0.1:"
                            + mtlsPort);
            props.put(
                    "listener.security.protocol.map",
                    "PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL,MTLS:SSL,CONTROLLER:PLAINTEXT");
            putStore(props, "listener.name.mtls.ssl.keystore", keystore);
            putStore(props, "listener.name.mtls.ssl.truststore", clientTruststore);
            props.put("listener.name.mtls.ssl.client.auth", "required");
            // The principal of a certificate "CN=outbox-relay" is User:outbox-relay, as a SCRAM login's would be (the
            // rule maps certificate principals only: a SASL_SSL login keeps its SCRAM user).
            props.put("ssl.principal.mapping.rules", "RULE:^CN=([A-Za-z0-9._-]+)$/$1/,DEFAULT");
            props.put("listener.name.secure.sasl.enabled.mechanisms", "SCRAM-SHA-512");
            props.put(
                    "listener.name.secure.scram-sha-512.sasl.jaas.config",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;");
            putStore(props, "listener.name.secure.ssl.keystore", keystore);
            props.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            props.put("super.users", "User:" + ADMIN_USER);
            props.put("allow.everyone.if.no.acl.found", "false");
            props.put("auto.create.topics.enable", "false");
            EmbeddedKafka.format(dir, props);

            KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(props), Time.SYSTEM);
            server.startup();
            SecureKafka kafka = new SecureKafka(
                    dir,
                    server,
                    "127.0.0.1:" + securePort,
                    "127.0.0.1:" + plainPort,
                    truststore,
                    "127.0.0.1:" + mtlsPort);
            EmbeddedKafka.awaitReady(kafka.adminBootstrapServers);
            return kafka;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot start a SASL_SSL Kafka", e);
        }
    }

    /** The SASL_SSL listener: what the services are given as {@code kafka.bootstrap.servers}. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** An admin client on the plaintext listener (super user); the caller closes it. */
    public Admin admin() {
        return Admin.create(Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                adminBootstrapServers,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                60_000));
    }

    /** Creates (or replaces) a SCRAM-SHA-512 login. */
    public void addUser(String user, String password) {
        try (Admin admin = admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(
                            user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password)))
                    .all()
                    .get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot add the SCRAM user " + user, e);
        }
    }

    /**
     * Allows {@code user} these operations on literal resources, e.g. {@code allow("relay", ResourceType.TOPIC,
     * "payment-events", AclOperation.WRITE, AclOperation.DESCRIBE)}.
     */
    public void allow(String user, ResourceType type, String name, AclOperation... operations) {
        List<AclBinding> bindings = new ArrayList<>();
        for (AclOperation operation : operations) {
            bindings.add(new AclBinding(
                    new ResourcePattern(type, name, PatternType.LITERAL),
                    new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW)));
        }
        try (Admin admin = admin()) {
            admin.createAcls(bindings).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot create the ACLs of " + user, e);
        }
    }

    /**
     * The standard Kafka client settings (keys without the {@code kafka.} prefix) that log in as {@code user} over
     * SASL_SSL, trusting the generated certificate.
     */
    public Map<String, String> clientSettings(String user, String password) {
        Map<String, String> settings = new HashMap<>();
        settings.put("bootstrap.servers", bootstrapServers);
        settings.put("security.protocol", "SASL_SSL");
        settings.put("sasl.mechanism", "SCRAM-SHA-512");
        settings.put(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user + "\" password=\""
                        + password + "\";");
        putStore(settings, "ssl.truststore", truststore);
        return settings;
    }

    /** The mTLS listener ({@code SSL}, client certificate required). */
    public String mtlsBootstrapServers() {
        return mtlsBootstrapServers;
    }

    /**
     * The standard Kafka client settings (keys without the {@code kafka.} prefix) that log in as {@code user} over
     * mTLS: a new key pair in a PKCS12 keystore with a certificate "CN=user" issued by the test CA, and the
     * truststore of the broker's certificate.
     */
    public Map<String, String> mtlsClientSettings(String user) {
        Path keystore = dir.resolve("client-" + user + "-" + UUID.randomUUID() + ".p12");
        Path request = dir.resolve(keystore.getFileName() + ".csr");
        Path issued = dir.resolve(keystore.getFileName() + ".crt");
        Path ca = dir.resolve("client-ca.p12");
        try {
            genKeyPair(keystore, "client", "CN=" + user);
            keytool(
                    "-certreq",
                    "-alias",
                    "client",
                    "-keystore",
                    keystore.toString(),
                    "-storepass",
                    STORE_PASSWORD,
                    "-file",
                    request.toString());
            keytool(
                    "-gencert",
                    "-rfc",
                    "-alias",
                    "ca",
                    "-keystore",
                    ca.toString(),
                    "-storepass",
                    STORE_PASSWORD,
                    "-validity",
                    "2",
                    "-infile",
                    request.toString(),
                    "-outfile",
                    issued.toString());
            importCert(keystore, "ca", dir.resolve("client-ca.crt"));
            importCert(keystore, "client", issued);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot issue a client certificate for " + user, e);
        }
        Map<String, String> settings = mtlsWithoutCertificate();
        putStore(settings, "ssl.keystore", keystore);
        return settings;
    }

    /** Settings for the mTLS listener that trust the broker but present no certificate (the broker refuses them). */
    public Map<String, String> mtlsWithoutCertificate() {
        Map<String, String> settings = new HashMap<>();
        settings.put("bootstrap.servers", mtlsBootstrapServers);
        settings.put("security.protocol", "SSL");
        putStore(settings, "ssl.truststore", truststore);
        return settings;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
        EmbeddedKafka.deleteRecursively(dir);
    }

    /** {@code <prefix>.type}, {@code .location} and {@code .password} of a PKCS12 store. */
    private static void putStore(Map<? super String, ? super String> settings, String prefix, Path store) {
        settings.put(prefix + ".type", "PKCS12");
        settings.put(prefix + ".location", store.toString());
        settings.put(prefix + ".password", STORE_PASSWORD);
    }

    /** A new EC (P-256) key pair under {@code alias}, its self-signed certificate valid 2 days, in a PKCS12 store. */
    private static void genKeyPair(Path keystore, String alias, String dname, String... more) throws IOException {
        List<String> args = new ArrayList<>(
                List.of("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"));
        args.addAll(List.of("-dname", dname));
        args.addAll(List.of(more));
        args.addAll(List.of("-storetype", "PKCS12", "-keystore", keystore.toString(), "-storepass", STORE_PASSWORD));
        keytool(args.toArray(String[]::new));
    }

    /** Writes the certificate under {@code alias} to {@code file} (PEM). */
    private static void exportCert(Path keystore, String alias, Path file) throws IOException {
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                alias,
                "-keystore",
                keystore.toString(),
                "-storepass",
                STORE_PASSWORD,
                "-file",
                file.toString());
    }

    /**
     * Imports the certificate in {@code file} under {@code alias}: a trusted certificate, or the CA's answer to the key
     * pair's request when {@code alias} holds a key pair. Creates a PKCS12 store if there is none.
     */
    private static void importCert(Path keystore, String alias, Path file) throws IOException {
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                alias,
                "-file",
                file.toString(),
                "-storetype",
                "PKCS12",
                "-keystore",
                keystore.toString(),
                "-storepass",
                STORE_PASSWORD);
    }

    private static void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        try {
            if (process.waitFor() != 0) {
                throw new IllegalStateException("keytool " + args[0] + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
