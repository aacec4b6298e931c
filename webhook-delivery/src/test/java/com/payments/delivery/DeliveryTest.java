package com.payments.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import com.payments.infra.Kafka;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.QuarkusProcess;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * webhook-delivery against real PostgreSQL, the embedded Kafka broker and receivers on loopback (test profile: http and
 * loopback allowed, schedule 300ms/600ms/1s, disable-after 3s, 2 attempts in flight per endpoint).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
class DeliveryTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    /** The test profile's retired key (QuarkusProcess.TEST_WEBHOOK_SECRETS_KEYS' second entry). */
    static final String TEST_1 = QuarkusProcess.TEST_WEBHOOK_SECRETS_KEYS.split(",")[1];

    final ObjectMapper json = new ObjectMapper();
    final List<AutoCloseable> closing = new ArrayList<>();
    Webhooks db;
    UUID merchant;

    @Inject
    DeliveryRepository repository;

    @Inject
    FakeHostResolver names;

    @Inject
    WebhooksConfig webhooks;

    @BeforeEach
    void setUp() {
        db = Webhooks.ofRunningApplication();
        merchant = db.merchant();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        db.close();
    }

    <T extends AutoCloseable> T closing(T resource) {
        closing.add(resource);
        return resource;
    }

    @Test
    void healthAndMetricsAreOnTheManagementPortOnly() {
        int management = ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class);
        for (String path : List.of("/q/health/ready", "/q/health/live", "/q/metrics")) {
            RestAssured.given().port(management).get(path).then().statusCode(200);
            RestAssured.given().get(path).then().statusCode(404);
        }
    }

    /**
     * Records of payment-events fan out to the subscribed endpoint only, each delivered once (a record consumed twice
     * adds nothing) with the feed's body and a valid signature per unexpired secret; unsubscribed types, other
     * merchants' events and records without a merchant are not delivered.
     */
    /**
     * The events of manual capture (issue 42) reach an endpoint subscribed to them by name and one subscribed to
     * {@code *}; an endpoint subscribed to other types gets none of them.
     */
    @Test
    void manualCaptureEventsAreDeliveredToSubscribedEndpoints() throws Exception {
        Receiver named = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint byName =
                db.endpoint(merchant, named.url(), "PaymentAuthorized", "PaymentCanceled", "PaymentExpired");
        Receiver all = closing(Receiver.answering(n -> 200));
        db.endpoint(merchant, all.url(), "*");
        Receiver others = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint capturesOnly = db.endpoint(merchant, others.url(), "PaymentCaptured");

        UUID authorized = UUID.randomUUID();
        UUID canceled = UUID.randomUUID();
        UUID expired = UUID.randomUUID();
        publish(List.of(
                db.event(authorized, merchant, "PaymentAuthorized"),
                db.event(canceled, merchant, "PaymentCanceled"),
                db.event(expired, merchant, "PaymentExpired")));

        await().atMost(WAIT).until(() -> named.requests() == 3 && all.requests() == 3);
        assertThat(named.received().stream().map(r -> r.headers().get("webhook-id")))
                .containsExactlyInAnyOrder(authorized.toString(), canceled.toString(), expired.toString());
        assertThat(all.received().stream().map(r -> r.headers().get("webhook-id")))
                .containsExactlyInAnyOrder(authorized.toString(), canceled.toString(), expired.toString());
        // a delivery's outcome is written after its endpoint answered: the last one may still be on its way
        await().atMost(WAIT)
                .until(() -> db.count(
                                "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'SUCCEEDED'",
                                byName.id())
                        == 3);
        // the fan-out writes every endpoint's deliveries of a record in one statement: none were written for it
        assertThat(db.count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ?", capturesOnly.id()))
                .isZero();
        assertThat(others.requests()).isZero();
    }

    @Test
    void subscribedEventsAreDeliveredOnceWithValidSignatures() throws Exception {
        Receiver receiver = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "PaymentCaptured", "RefundSucceeded");
        String previous = Webhooks.newSecret(); // a rotation's old secret, still in its grace period
        db.update(
                "INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, expires_at) VALUES (?, ?, now() + interval '1 hour')",
                endpoint.id(),
                previous);
        db.update(
                "INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, expires_at) VALUES (?, ?, now() - interval '1 second')",
                endpoint.id(),
                Webhooks.newSecret());
        UUID otherMerchant = db.merchant();
        Receiver other = closing(Receiver.answering(n -> 200));
        db.endpoint(otherMerchant, other.url(), "*");

        UUID captured = UUID.randomUUID();
        UUID failed = UUID.randomUUID();
        UUID refunded = UUID.randomUUID();
        UUID othersEvent = UUID.randomUUID();
        UUID last = UUID.randomUUID();
        List<String> records = new ArrayList<>();
        records.add(db.event(captured, merchant, "PaymentCaptured"));
        records.add(db.event(failed, merchant, "PaymentFailed"));
        records.add(db.event(refunded, merchant, "RefundSucceeded"));
        records.add(records.get(0)); // consumed again
        records.add("{\"eventId\": \"" + UUID.randomUUID() + "\", \"type\": \"PaymentCaptured\"}"); // no merchant
        String others = db.event(othersEvent, otherMerchant, "PaymentFailed");
        // The records share a key, so one partition keeps their order: once the last one is delivered, all were read.
        records.add(db.event(last, merchant, "PaymentCaptured"));
        publish(records);
        publish(List.of(others));

        await().atMost(WAIT)
                .until(() -> db.count(
                                "SELECT count(*) FROM webhook_deliveries WHERE event_id = ? AND status = 'SUCCEEDED'",
                                last)
                        == 1);
        await().atMost(WAIT).until(() -> other.requests() == 1);
        assertThat(db.count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ?", endpoint.id()))
                .isEqualTo(3);
        await().atMost(WAIT)
                .until(() -> db.count(
                                "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'SUCCEEDED'",
                                endpoint.id())
                        == 3);
        List<Receiver.Received> received = receiver.received();
        assertThat(received).hasSize(3);
        assertThat(received.stream().map(r -> r.headers().get("webhook-id")))
                .containsExactlyInAnyOrder(captured.toString(), refunded.toString(), last.toString());

        for (Receiver.Received r : received) {
            String id = r.headers().get("webhook-id");
            String timestamp = r.headers().get("webhook-timestamp");
            assertThat(Long.parseLong(timestamp))
                    .isCloseTo(System.currentTimeMillis() / 1000, org.assertj.core.data.Offset.offset(60L));
            assertThat(r.headers().get("content-type")).isEqualTo("application/json");
            String[] signatures = r.headers().get("webhook-signature").split(" ");
            assertThat(signatures)
                    .containsExactlyInAnyOrder(
                            hmac(endpoint.secret(), id, timestamp, r.body()), hmac(previous, id, timestamp, r.body()));

            // the body is the event as GET /v1/events/{id} shows it: id, type, createdAt, version, payment, data, in
            // that order
            Map<String, Object> row = db.rows(
                            "SELECT type, created_at, version, payment::text AS payment, payload::text AS payload"
                                    + " FROM merchant_events WHERE id = ?::uuid",
                            id)
                    .get(0);
            JsonNode body = json.readTree(r.body());
            assertThat(r.body())
                    .startsWith("{\"id\":\"" + id + "\",\"type\":\"" + row.get("type") + "\",\"createdAt\":\"");
            assertThat(r.body())
                    .endsWith(",\"version\":" + row.get("version") + ",\"payment\":" + row.get("payment") + ",\"data\":"
                            + row.get("payload") + "}");
            assertThat(body.get("payment").get("status").asText()).isEqualTo("CAPTURED");
            assertThat(OffsetDateTime.parse(body.get("createdAt").asText()).toInstant())
                    .isEqualTo(((OffsetDateTime) row.get("created_at")).toInstant());
        }
        assertThat(db.count(
                        "SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id"
                                + " WHERE d.endpoint_id = ? AND a.outcome = 'SUCCEEDED' AND a.response_code = 200",
                        endpoint.id()))
                .isEqualTo(3);
    }

    /**
     * Secrets at rest (issue 37): a secret sealed under the retired key (test-1, still listed after the current
     * test-2) still signs, beside one sealed under the current key and a row still in plaintext (written before V94).
     */
    @Test
    void secretsSealedUnderARetiredKeyOrStillInPlaintextSign() throws Exception {
        Receiver receiver = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "*");
        String retired = Webhooks.newSecret();
        UUID row = db.sealed(endpoint.id(), retired, WebhookSecretCipher.of(TEST_1), "1 hour");
        assertThat(db.scalar("SELECT key_id FROM webhook_endpoint_secrets WHERE id = ?", String.class, row))
                .isEqualTo("test-1");
        String plaintext = Webhooks.newSecret();
        db.update(
                "INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, expires_at) VALUES (?, ?, now() + interval '2 hours')",
                endpoint.id(),
                plaintext);
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        UUID delivery = db.delivery(endpoint.id(), merchant, event);

        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(delivery)));
        Receiver.Received r = receiver.received().get(0);
        String timestamp = r.headers().get("webhook-timestamp");
        assertThat(r.headers().get("webhook-signature").split(" "))
                .containsExactlyInAnyOrder(
                        hmac(endpoint.secret(), event.toString(), timestamp, r.body()),
                        hmac(retired, event.toString(), timestamp, r.body()),
                        hmac(plaintext, event.toString(), timestamp, r.body()));
    }

    /**
     * A sealed secret that does not open fails closed (issue 37): one altered in a byte, one copied from another
     * endpoint's row, one under a key id webhook-delivery does not have. Nothing is sent to those endpoints; each
     * attempt is a failed attempt without an answer, retried on the schedule. The endpoint whose secret was copied
     * still gets its delivery, signed with its own secret.
     */
    @Test
    void anAlteredMovedOrUnknownKeySecretSignsNothing() throws Exception {
        Receiver source = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint original = db.endpoint(merchant, source.url(), "*");
        List<Receiver> receivers = new ArrayList<>();
        List<UUID> deliveries = new ArrayList<>();
        List<String> corruptions = List.of(
                "ciphertext = set_byte(ciphertext, 20, get_byte(ciphertext, 20) # 1)",
                "ciphertext = (SELECT ciphertext FROM webhook_endpoint_secrets WHERE endpoint_id = '" + original.id()
                        + "')",
                "key_id = 'gone'");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        for (String corruption : corruptions) {
            Receiver receiver = closing(Receiver.answering(n -> 200));
            Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "*");
            db.update("UPDATE webhook_endpoint_secrets SET " + corruption + " WHERE endpoint_id = ?", endpoint.id());
            receivers.add(receiver);
            deliveries.add(db.delivery(endpoint.id(), merchant, event));
        }
        UUID control = db.delivery(original.id(), merchant, event);

        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(control)));
        for (UUID delivery : deliveries) {
            await().atMost(WAIT)
                    .until(() ->
                            db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery)
                                    >= 2);
            assertNotSent(firstAttempt(delivery), "not sent: a signing secret cannot be decrypted");
        }
        assertThat(receivers).allSatisfy(r -> assertThat(r.requests()).isZero());
        Receiver.Received r = source.received().get(0);
        assertThat(r.headers().get("webhook-signature"))
                .isEqualTo(hmac(original.secret(), event.toString(), r.headers().get("webhook-timestamp"), r.body()));
    }

    /**
     * A delivery row naming another merchant's event (issue 37): the lease does not read that event, so nothing of it
     * is sent; the delivery ends FAILED without an attempt, as for an event gone from the feed.
     */
    @Test
    void deliveryNamingAnotherMerchantsEventSendsNothing() {
        Receiver receiver = closing(Receiver.answering(n -> 200));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "*");
        UUID othersEvent = UUID.randomUUID();
        db.event(othersEvent, db.merchant(), "PaymentCaptured");
        UUID delivery = db.delivery(endpoint.id(), merchant, othersEvent);

        await().atMost(WAIT).until(() -> !"PENDING".equals(db.status(delivery)));
        assertThat(db.status(delivery)).isEqualTo("FAILED");
        assertThat(receiver.requests()).isZero();
        assertThat(db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery))
                .isZero();
    }

    /**
     * Successes are written many per statement, each only while its lease is current: of two leased deliveries whose
     * attempts succeeded, the one whose lease another sender took over (next_attempt_at moved) is left as it is.
     */
    @Test
    void batchedSuccessesAreWrittenOnlyWhileTheirLeaseIsCurrent() {
        Webhooks.Endpoint endpoint = db.endpoint(merchant, "http://127.0.0.1:9/unused", "*");
        db.update("UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour' WHERE id = ?", endpoint.id());
        List<DeliveryRepository.Success> successes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            UUID event = UUID.randomUUID();
            db.event(event, merchant, "PaymentCaptured");
            UUID delivery = UUID.randomUUID();
            // leased by this sender until an hour from now (not due, so the running sender leaves it alone)
            OffsetDateTime leasedUntil =
                    OffsetDateTime.now(java.time.ZoneOffset.UTC).plusHours(1).withNano(0);
            db.update(
                    "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, merchant_id, origin, next_attempt_at)"
                            + " VALUES (?, ?, ?, ?, 'event', ?)",
                    delivery,
                    endpoint.id(),
                    event,
                    merchant,
                    leasedUntil);
            DeliveryRepository.Lease lease = new DeliveryRepository.Lease(
                    delivery,
                    endpoint.id(),
                    event,
                    0,
                    java.time.Instant.now(),
                    leasedUntil,
                    null,
                    "ENABLED",
                    List.of(),
                    null);
            successes.add(new DeliveryRepository.Success(
                    lease, new DeliveryRepository.Attempt(java.time.Instant.now(), 7, 200, true, null)));
        }
        UUID stale = successes.get(1).lease().id();
        db.update(
                "UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at + interval '1 minute' WHERE id = ?",
                stale);

        List<Boolean> written = repository.recordSucceeded(successes).await().atMost(WAIT);

        assertThat(written).containsExactly(true, false);
        UUID current = successes.get(0).lease().id();
        assertThat(db.count(
                        "SELECT count(*) FROM webhook_deliveries WHERE id = ? AND status = 'SUCCEEDED' AND attempts = 1"
                                + " AND next_attempt_at IS NULL",
                        current))
                .isEqualTo(1);
        assertThat(db.count(
                        "SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt = 1"
                                + " AND outcome = 'SUCCEEDED' AND response_code = 200 AND latency_ms = 7",
                        current))
                .isEqualTo(1);
        assertThat(db.count(
                        "SELECT count(*) FROM webhook_deliveries WHERE id = ? AND status = 'PENDING' AND attempts = 0",
                        stale))
                .isEqualTo(1);
        assertThat(db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", stale))
                .isZero();
        assertThat(db.count(
                        "SELECT count(*) FROM webhook_endpoints WHERE id = ? AND failing_since IS NULL", endpoint.id()))
                .isEqualTo(1);
    }

    /** A 500 is retried on the schedule; every attempt is a row; the success clears the endpoint's failing_since. */
    @Test
    void failedAttemptIsRetriedWithAnAttemptRowEach() {
        Receiver receiver = closing(Receiver.answering(n -> n == 0 ? 500 : 200));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "*");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        UUID delivery = db.delivery(endpoint.id(), merchant, event);

        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(delivery)));
        List<Map<String, Object>> attempts = db.rows(
                "SELECT attempt, response_code, outcome, error, next_attempt_at, started_at FROM webhook_delivery_attempts"
                        + " WHERE delivery_id = ? ORDER BY attempt",
                delivery);
        assertThat(attempts).hasSize(2);
        assertThat(attempts.get(0))
                .containsEntry("attempt", 1)
                .containsEntry("response_code", 500)
                .containsEntry("outcome", "FAILED")
                .containsEntry("error", "HTTP 500");
        OffsetDateTime first = (OffsetDateTime) attempts.get(0).get("started_at");
        OffsetDateTime retryAt = (OffsetDateTime) attempts.get(0).get("next_attempt_at");
        assertThat(Duration.between(first, retryAt)).isLessThan(Duration.ofSeconds(2)); // 300 ms schedule + the attempt
        assertThat(attempts.get(1))
                .containsEntry("attempt", 2)
                .containsEntry("response_code", 200)
                .containsEntry("outcome", "SUCCEEDED");
        assertThat(attempts.get(1).get("next_attempt_at")).isNull();
        assertThat(db.count("SELECT attempts::bigint FROM webhook_deliveries WHERE id = ?", delivery))
                .isEqualTo(2);
        assertThat(db.scalar(
                        "SELECT failing_since FROM webhook_endpoints WHERE id = ?",
                        OffsetDateTime.class,
                        endpoint.id()))
                .isNull();
        assertThat(receiver.requests()).isEqualTo(2);
    }

    /**
     * 500, 500, then 200 under the test schedule (300ms, 600ms, 1s; 100 ms poll): three attempt rows; each retry waits
     * at most its schedule entry after the failed attempt ended, and starts at or after the previous row's
     * next_attempt_at (the lease takes only due deliveries) and within a poll interval of it plus an allowance for a
     * loaded machine (the first tick after it is due leases it); the delivery succeeds once.
     */
    @Test
    void retriesFollowTheScheduleUntilTheDeliverySucceedsOnce() {
        Duration poll = webhooks.pollInterval();
        List<Duration> schedule = webhooks.schedule();
        Duration allowance = Duration.ofMillis(900); // lease query, worker threads and a shared 2-core machine
        Receiver receiver = closing(Receiver.answering(n -> n < 2 ? 500 : 200));
        UUID delivery = deliveryTo(receiver.url());

        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(delivery)));
        List<Map<String, Object>> attempts = db.rows(
                "SELECT attempt, response_code, outcome, next_attempt_at, started_at, latency_ms"
                        + " FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt",
                delivery);
        assertThat(attempts).extracting(a -> a.get("response_code")).containsExactly(500, 500, 200);
        assertThat(attempts).extracting(a -> a.get("outcome")).containsExactly("FAILED", "FAILED", "SUCCEEDED");
        assertThat(attempts.get(2).get("next_attempt_at")).isNull();
        for (int i = 0; i < 2; i++) {
            OffsetDateTime started = (OffsetDateTime) attempts.get(i).get("started_at");
            OffsetDateTime ended =
                    started.plus(Duration.ofMillis(((Number) attempts.get(i).get("latency_ms")).longValue()));
            OffsetDateTime due = (OffsetDateTime) attempts.get(i).get("next_attempt_at");
            OffsetDateTime retried = (OffsetDateTime) attempts.get(i + 1).get("started_at");
            assertThat(due).as("attempt %d's retry", i + 1).isAfterOrEqualTo(started);
            // drawn from [0, schedule[i]] as the attempt ended (+100 ms: latency_ms truncates, the draw is later)
            assertThat(Duration.between(ended, due))
                    .as("attempt %d's wait", i + 1)
                    .isLessThanOrEqualTo(schedule.get(i).plus(Duration.ofMillis(100)));
            assertThat(retried).as("attempt %d", i + 2).isAfterOrEqualTo(due);
            assertThat(Duration.between(due, retried))
                    .as("attempt %d after it was due", i + 2)
                    .isLessThanOrEqualTo(poll.plus(allowance));
        }
        assertThat(db.count("SELECT attempts::bigint FROM webhook_deliveries WHERE id = ?", delivery))
                .isEqualTo(3);
        assertThat(receiver.requests()).isEqualTo(3);
    }

    /**
     * Endpoints whose URL names a private, link-local or embedded-private address (written directly, as if the
     * registration check had been bypassed) get a failed attempt naming the refusal: nothing is sent, and the
     * addresses are refused before any connection.
     */
    @Test
    void privateAddressesAreRefusedAtConnectTime() {
        Map<String, String> refused = Map.of(
                "http://10.1.2.3:21150/hook", "private address",
                "http://169.254.169.254/latest/meta-data", "link-local or metadata address",
                "http://[::ffff:192.168.1.1]:21151/", "private address",
                "http://0.0.0.0:21152/", "unspecified address");
        Map<UUID, String> deliveries = new java.util.HashMap<>();
        refused.forEach((url, reason) -> {
            Webhooks.Endpoint endpoint = db.endpoint(merchant, url, "*");
            UUID event = UUID.randomUUID();
            db.event(event, merchant, "PaymentCaptured");
            deliveries.put(db.delivery(endpoint.id(), merchant, event), reason);
        });
        deliveries.forEach((delivery, reason) -> {
            await().atMost(WAIT)
                    .until(() ->
                            db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery)
                                    >= 1);
            Map<String, Object> attempt = db.rows(
                            "SELECT response_code, outcome, error FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt = 1",
                            delivery)
                    .get(0);
            assertThat(attempt.get("response_code")).isNull();
            assertThat(attempt.get("outcome")).isEqualTo("FAILED");
            assertThat((String) attempt.get("error")).startsWith("not sent: ").contains(reason);
        });
    }

    /**
     * Connect-time refusal of a name (FakeHostResolver answers for it; no DNS): the host resolves to a private address,
     * so the attempt is not sent and its error names the address.
     */
    @Test
    void hostnameResolvingToAPrivateAddressIsRefusedAtSendTime() {
        names.answer("private.example.test", "10.0.0.5");
        UUID delivery = deliveryTo("http://private.example.test:21153/hook");

        assertNotSent(
                firstAttempt(delivery), "not sent: private.example.test resolves to a private address (10.0.0.5)");
        assertThat(names.asked("private.example.test")).isPositive();
    }

    /**
     * DNS rebinding: the name's first answer is an allowed address (loopback under the test profile, standing in for
     * the public address the registration check saw), and the first delivery reaches the receiver there; then the
     * name answers 169.254.169.254, and the next delivery, resolved again at send time, is refused.
     */
    @Test
    void hostnameReboundToTheMetadataAddressIsRefusedAtSendTime() {
        Receiver receiver = closing(Receiver.answering(n -> 200));
        names.answer("rebind.example.test", "127.0.0.1");
        String url = "http://rebind.example.test:" + receiver.port() + "/hooks";
        UUID first = deliveryTo(url);
        await().atMost(WAIT).until(() -> "SUCCEEDED".equals(db.status(first)));
        assertThat(receiver.received().get(0).headers().get("host"))
                .isEqualTo("rebind.example.test:" + receiver.port());

        names.answer("rebind.example.test", "169.254.169.254");
        UUID second = deliveryTo(url);

        assertNotSent(
                firstAttempt(second),
                "not sent: rebind.example.test resolves to a link-local or metadata address (169.254.169.254)");
        assertThat(receiver.requests()).isEqualTo(1);
    }

    /**
     * A name with an allowed and a private address is refused: every address is checked, not only the one connected
     * to. The allowed one is a loopback receiver, so a sender that checked only the first address would show it there
     * (a request), not on the network.
     */
    @Test
    void hostnameWithAnAllowedAndAPrivateAddressIsRefused() {
        Receiver receiver = closing(Receiver.answering(n -> 200));
        names.answer("mixed.example.test", "127.0.0.1", "10.0.0.5");
        UUID delivery = deliveryTo("http://mixed.example.test:" + receiver.port() + "/hooks");

        assertNotSent(firstAttempt(delivery), "not sent: mixed.example.test resolves to a private address (10.0.0.5)");
        assertThat(receiver.requests()).isZero();
    }

    private UUID deliveryTo(String url) {
        Webhooks.Endpoint endpoint = db.endpoint(merchant, url, "*");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        return db.delivery(endpoint.id(), merchant, event);
    }

    private Map<String, Object> firstAttempt(UUID delivery) {
        await().atMost(WAIT)
                .until(() -> db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery)
                        >= 1);
        return db.rows(
                        "SELECT response_code, outcome, error FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt = 1",
                        delivery)
                .get(0);
    }

    private static void assertNotSent(Map<String, Object> attempt, String error) {
        assertThat(attempt.get("response_code")).isNull();
        assertThat(attempt).containsEntry("outcome", "FAILED").containsEntry("error", error);
    }

    /** A 3xx is a failed attempt: the redirect's target (here another loopback receiver) never gets a request. */
    @Test
    void redirectsAreNotFollowed() {
        Receiver target = closing(Receiver.answering(n -> 200));
        Receiver redirecting = closing(Receiver.redirectingTo(target.url()));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, redirecting.url(), "*");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        UUID delivery = db.delivery(endpoint.id(), merchant, event);

        await().atMost(WAIT)
                .until(() -> db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery)
                        >= 2);
        Map<String, Object> attempt = db.rows(
                        "SELECT response_code, outcome, error FROM webhook_delivery_attempts WHERE delivery_id = ? AND attempt = 1",
                        delivery)
                .get(0);
        assertThat(attempt)
                .containsEntry("response_code", 302)
                .containsEntry("outcome", "FAILED")
                .containsEntry("error", "HTTP 302: redirects are not followed");
        assertThat(target.requests()).isZero();
    }

    /**
     * A receiver that answers after 5 s holds only its own endpoint's slots (2 in the test profile): a second
     * endpoint's deliveries, due at the same time, all complete while the slow one is still busy.
     */
    @Test
    void slowEndpointDoesNotDelayOthers() {
        Receiver slow = closing(Receiver.slow(Duration.ofSeconds(5)));
        Receiver fast = closing(Receiver.answering(n -> 200));
        slowEndpointDoesNotDelay(slow, slow.url(), fast.url(), "slowEndpointDoesNotDelayOthers");
        assertThat(slow.maxOpen()).isEqualTo(2);
    }

    /** The same on one host: the slow endpoint's connections are its own, not the host's (hosted receivers). */
    @Test
    void slowEndpointDoesNotDelayAnotherOnTheSameHost() {
        Receiver host = closing(Receiver.slowOn("/slow", Duration.ofSeconds(5)));
        slowEndpointDoesNotDelay(
                host, host.url("/slow"), host.url("/fast"), "slowEndpointDoesNotDelayAnotherOnTheSameHost");
    }

    private void slowEndpointDoesNotDelay(Receiver slow, String slowUrl, String fastUrl, String name) {
        Webhooks.Endpoint slowEndpoint = db.endpoint(merchant, slowUrl, "*");
        Webhooks.Endpoint fastEndpoint = db.endpoint(merchant, fastUrl, "*");
        List<UUID> fastDeliveries = new ArrayList<>();
        List<UUID> events = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            UUID event = UUID.randomUUID();
            db.event(event, merchant, "PaymentCaptured");
            events.add(event);
        }
        long start = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            db.delivery(slowEndpoint.id(), merchant, events.get(i));
        }
        // the slow endpoint's first attempts are under way before the fast endpoint has anything to send
        await().atMost(WAIT).until(() -> slow.requests() >= 2);
        for (int i = 10; i < 20; i++) {
            fastDeliveries.add(db.delivery(fastEndpoint.id(), merchant, events.get(i)));
        }
        await().atMost(WAIT).until(() -> fastDeliveries.stream().allMatch(d -> "SUCCEEDED".equals(db.status(d))));
        Duration fastDone = Duration.ofNanos(System.nanoTime() - start);
        long slowSucceeded = db.count(
                "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'SUCCEEDED'",
                slowEndpoint.id());
        System.out.printf(
                "%s: 10 deliveries to the fast endpoint done in %d ms; slow endpoint: %d succeeded, receiver: %d"
                        + " requests, at most %d open at once%n",
                name, fastDone.toMillis(), slowSucceeded, slow.requests(), slow.maxOpen());
        assertThat(fastDone).isLessThan(Duration.ofSeconds(4));
        assertThat(slowSucceeded).isZero();
    }

    /**
     * An endpoint failing for longer than disable-after (3 s here) is DISABLED with one operations item; its pending
     * deliveries then end FAILED without being sent.
     */
    @Test
    void endpointFailingPastDisableAfterIsDisabledOnce() {
        Receiver receiver = closing(Receiver.answering(n -> 503));
        Webhooks.Endpoint endpoint = db.endpoint(merchant, receiver.url(), "*");
        UUID event = UUID.randomUUID();
        db.event(event, merchant, "PaymentCaptured");
        UUID delivery = db.delivery(endpoint.id(), merchant, event);

        await().atMost(WAIT).until(() -> "DISABLED"
                .equals(db.scalar("SELECT status FROM webhook_endpoints WHERE id = ?", String.class, endpoint.id())));
        assertThat(db.scalar("SELECT disabled_reason FROM webhook_endpoints WHERE id = ?", String.class, endpoint.id()))
                .startsWith("every attempt failed since ");
        await().atMost(WAIT).until(() -> "FAILED".equals(db.status(delivery)));
        int requests = receiver.requests();
        assertThat(requests).isGreaterThanOrEqualTo(2);
        assertThat(db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", delivery))
                .isEqualTo(requests);

        UUID later = UUID.randomUUID();
        db.event(later, merchant, "PaymentCaptured");
        UUID notSent = db.delivery(endpoint.id(), merchant, later);
        await().atMost(WAIT).until(() -> "FAILED".equals(db.status(notSent)));
        assertThat(db.count("SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id = ?", notSent))
                .isZero();
        assertThat(receiver.requests()).isEqualTo(requests);
        assertThat(db.count(
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'webhook_endpoint' AND subject_id = ?"
                                + " AND reason = 'webhook_endpoint_disabled' AND status = 'OPEN'",
                        endpoint.id().toString()))
                .isEqualTo(1);
    }

    /**
     * A payment's events are ordered by createdAt, whatever the order their transactions started in: here the
     * transaction that started first writes its event last, and that event's createdAt is the later one (V92).
     */
    @Test
    void createdAtOrdersOnePaymentsEventsByCommit() throws Exception {
        var config = ConfigProvider.getConfig();
        String url = config.getValue("quarkus.datasource.jdbc.url", String.class);
        String user = config.getValue("quarkus.datasource.username", String.class);
        String password = config.getOptionalValue("quarkus.datasource.password", String.class)
                .orElse("");
        UUID payment = UUID.randomUUID();
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        String insert = "INSERT INTO outbox (event_id, event_type, topic, key, payload) VALUES (?, 'PaymentCaptured',"
                + " 'payment-events', ?, jsonb_build_object('merchantId', ?::text, 'paymentId', ?::text))";
        try (java.sql.Connection early = java.sql.DriverManager.getConnection(url, user, password);
                java.sql.Connection late = java.sql.DriverManager.getConnection(url, user, password)) {
            early.setAutoCommit(false);
            try (var st = early.createStatement()) {
                st.execute("SELECT now()"); // the transaction has started: its now() is fixed from here
            }
            try (var st = late.prepareStatement(insert)) {
                st.setObject(1, first);
                st.setString(2, payment.toString());
                st.setString(3, merchant.toString());
                st.setString(4, payment.toString());
                st.executeUpdate();
            }
            try (var st = early.prepareStatement(insert)) {
                st.setObject(1, second);
                st.setString(2, payment.toString());
                st.setString(3, merchant.toString());
                st.setString(4, payment.toString());
                st.executeUpdate();
            }
            early.commit();
        }
        OffsetDateTime firstAt =
                db.scalar("SELECT created_at FROM merchant_events WHERE id = ?", OffsetDateTime.class, first);
        OffsetDateTime secondAt =
                db.scalar("SELECT created_at FROM merchant_events WHERE id = ?", OffsetDateTime.class, second);
        assertThat(secondAt).isAfter(firstAt);
        // and the version (V93) counts them in the same order
        assertThat(db.scalar("SELECT version FROM merchant_events WHERE id = ?", Long.class, first))
                .isEqualTo(1L);
        assertThat(db.scalar("SELECT version FROM merchant_events WHERE id = ?", Long.class, second))
                .isEqualTo(2L);
    }

    /** An independent Standard Webhooks verifier: v1,base64(HMAC-SHA256(key, id.timestamp.body)). */
    static String hmac(String secret, String id, String timestamp, String body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(Base64.getDecoder().decode(secret.substring("whsec_".length())), "HmacSHA256"));
        return "v1,"
                + Base64.getEncoder()
                        .encodeToString(
                                mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8)));
    }

    void publish(List<String> values) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of("bootstrap.servers", Kafka.bootstrapServers(), "acks", "all"),
                new StringSerializer(),
                new StringSerializer())) {
            for (String value : values) {
                producer.send(new ProducerRecord<>("payment-events", "one-key", value))
                        .get();
            }
        }
    }
}
