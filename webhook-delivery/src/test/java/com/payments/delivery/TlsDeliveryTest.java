package com.payments.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * https receivers, as in production: the sender connects to the address it checked but verifies the certificate
 * against the URL's host and sends that host as SNI. The receiver's certificate (made by keytool for this run, its
 * only name DNS:localhost) is trusted through a Quarkus TLS configuration ({@code payments.webhooks.tls-configuration-name}).
 */
@QuarkusTest
@TestProfile(TlsDeliveryTest.TrustTestCertificate.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class TlsDeliveryTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    Webhooks db;
    UUID merchant;
    Receiver receiver;

    @BeforeEach
    void setUp() {
        db = Webhooks.ofRunningApplication();
        merchant = db.merchant();
        receiver = Receiver.tls(TestCertificate.KEY_STORE, TestCertificate.PASSWORD);
    }

    @AfterEach
    void tearDown() throws Exception {
        receiver.close();
        db.close();
    }

    @Test
    void anHttpsReceiverGetsTheDeliveryWithItsHostAsSni() {
        UUID delivery = deliveryTo("https://localhost:" + receiver.port() + "/hooks");

        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(delivery)));
        List<Receiver.Received> received = receiver.received();
        assertThat(received).hasSize(1);
        assertThat(received.get(0).serverName()).isEqualTo("localhost");
        assertThat(received.get(0).headers().get("host")).isEqualTo("localhost:" + receiver.port());
    }

    /** The same receiver by its address: the certificate does not name 127.0.0.1, so nothing is delivered. */
    @Test
    void aCertificateThatDoesNotNameTheHostFailsTheAttempt() {
        UUID delivery = deliveryTo("https://127.0.0.1:" + receiver.port() + "/hooks");

        await().atMost(WAIT)
                .until(() -> db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery)
                        >= 1);
        Map<String, Object> attempt = db.rows(
                        "SELECT outcome, response_code, error FROM webhook_delivery_attempts"
                                + " WHERE delivery_id = ? AND attempt = 1",
                        delivery)
                .get(0);
        assertThat(attempt.get("outcome")).isEqualTo("FAILED");
        assertThat(attempt.get("response_code")).isNull();
        assertThat((String) attempt.get("error")).containsIgnoringCase("SSL");
        assertThat(receiver.requests()).isZero();
    }

    private UUID deliveryTo(String url) {
        Webhooks.Endpoint endpoint = db.endpoint(merchant, url, "*");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        return db.delivery(endpoint.id(), merchant, event);
    }

    public static class TrustTestCertificate implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.tls.webhook-receivers.trust-store.pem.certs",
                    TestCertificate.CERTIFICATE.toString(),
                    "payments.webhooks.tls-configuration-name",
                    "webhook-receivers");
        }
    }

    /** A key pair and certificate for DNS:localhost only, made once per test JVM with the JDK's keytool. */
    static final class TestCertificate {
        static final String PASSWORD = "receiver-secret";
        static final Path KEY_STORE;
        static final Path CERTIFICATE;

        static {
            try {
                Path dir = Files.createTempDirectory("webhook-tls");
                KEY_STORE = dir.resolve("receiver.p12");
                CERTIFICATE = dir.resolve("receiver.pem");
                String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool")
                        .toString();
                run(
                        keytool,
                        "-genkeypair",
                        "-alias",
                        "receiver",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=localhost",
                        "-ext",
                        "SAN=dns:localhost",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        KEY_STORE.toString(),
                        "-storepass",
                        PASSWORD,
                        "-keypass",
                        PASSWORD);
                run(
                        keytool,
                        "-exportcert",
                        "-rfc",
                        "-alias",
                        "receiver",
                        "-keystore",
                        KEY_STORE.toString(),
                        "-storepass",
                        PASSWORD,
                        "-file",
                        CERTIFICATE.toString());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        private static void run(String... command) throws IOException {
            try {
                Process process =
                        new ProcessBuilder(command).redirectErrorStream(true).start();
                String output = new String(process.getInputStream().readAllBytes());
                if (process.waitFor() != 0) {
                    throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
