package com.payments.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.QuarkusProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The packaged service as a real process, killed with SIGKILL while attempts are in flight at slow receivers (sent,
 * outcome not yet written), then started again: every event reaches each subscribed endpoint (at least once), every
 * delivery ends SUCCEEDED with one attempt row per attempt, and no record's fan-out is lost or doubled. Stopped with
 * SIGTERM instead, it sends nothing twice: every request it sent has its outcome written before it exits, and it
 * leaves nothing leased.
 */
class DeliveryKillIT {
    private static final int EVENTS = 300;

    @Test
    void killedMidDeliveryLosesNothing() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("webhook_kill");
        createTopic();
        try (Receiver first = Receiver.slow(Duration.ofMillis(400));
                Receiver second = Receiver.slow(Duration.ofMillis(400));
                Webhooks sql = new Webhooks(db.jdbcUrl(), db.user(), db.password())) {
            UUID merchant = sql.merchant();
            UUID one = sql.endpoint(merchant, first.url(), "*").id();
            UUID two = sql.endpoint(merchant, second.url(), "PaymentCaptured").id();
            List<String> records = new ArrayList<>();
            for (int i = 0; i < EVENTS; i++) {
                records.add(sql.event(UUID.randomUUID(), merchant, "PaymentCaptured"));
            }
            publish(records);

            try (QuarkusProcess service = start(db, "5s", "3s")) {
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() ->
                                sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'") >= 20
                                        && first.requests() + second.requests()
                                                > sql.count("SELECT count(*) FROM webhook_delivery_attempts") + 4);
                service.kill();
            }
            long succeeded = sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'");
            long written = sql.count("SELECT count(*) FROM webhook_deliveries");
            long sent = first.requests() + second.requests();
            System.out.printf(
                    "killed: %d deliveries written of %d, %d succeeded, %d requests received%n",
                    written, 2 * EVENTS, succeeded, sent);
            assertThat(sent)
                    .as("requests without a recorded outcome: in flight at the kill")
                    .isGreaterThan(sql.count("SELECT count(*) FROM webhook_delivery_attempts"));

            try (QuarkusProcess service = start(db, "5s", "3s")) {
                await().atMost(Duration.ofMinutes(3))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'")
                                == 2L * EVENTS);
            }
            assertThat(sql.count("SELECT count(*) FROM webhook_deliveries")).isEqualTo(2L * EVENTS);
            for (UUID endpoint : List.of(one, two)) {
                assertThat(sql.count(
                                "SELECT count(DISTINCT event_id) FROM webhook_deliveries WHERE endpoint_id = ?",
                                endpoint))
                        .isEqualTo(EVENTS);
            }
            for (Receiver receiver : List.of(first, second)) {
                Set<String> ids = new HashSet<>();
                receiver.received().forEach(r -> ids.add(r.headers().get("webhook-id")));
                assertThat(ids).hasSize(EVENTS);
            }
            assertThat(sql.count("SELECT count(*) FROM webhook_deliveries d WHERE attempts <>"
                            + " (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)"))
                    .isZero();
        }
    }

    /**
     * SIGTERM, as Kubernetes stops the pod, with attempts in flight at slow receivers: the service leases nothing new,
     * gives back what it leased and has not sent, and writes the outcome of every attempt it sent before it exits. Once
     * it is gone, and before another one starts, every request the receivers got has its attempt row and no delivery
     * is left leased; after a restart each receiver got each event exactly once (webhooks are at least once, but our
     * own clean stop causes no duplicate). The lease (60 s) outlives the stop, so a delivery left leased is seen; the
     * attempt timeout (10 s) is far above the receivers' 400 ms, so no attempt fails on a loaded machine.
     */
    @Test
    void terminatedMidDeliverySendsNothingTwiceAndLeavesNothingLeased() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("webhook_term");
        createTopic();
        try (Receiver first = Receiver.slow(Duration.ofMillis(400));
                Receiver second = Receiver.slow(Duration.ofMillis(400));
                Webhooks sql = new Webhooks(db.jdbcUrl(), db.user(), db.password())) {
            UUID merchant = sql.merchant();
            sql.endpoint(merchant, first.url(), "*");
            sql.endpoint(merchant, second.url(), "PaymentCaptured");
            List<String> records = new ArrayList<>();
            for (int i = 0; i < EVENTS; i++) {
                records.add(sql.event(UUID.randomUUID(), merchant, "PaymentCaptured"));
            }
            publish(records);

            long sentAtExit;
            long attemptsAtExit;
            long leasedAtExit;
            try (QuarkusProcess service = start(db, "60s", "10s")) {
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() ->
                                sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'") >= 20
                                        && first.requests() + second.requests()
                                                > sql.count("SELECT count(*) FROM webhook_delivery_attempts") + 4);
                long signalled = System.nanoTime();
                service.terminate();
                assertThat(service.awaitExit(Duration.ofSeconds(40)))
                        .as("exit code after SIGTERM (null: still running after 40 s)")
                        .isEqualTo(143);
                long stopMillis = (System.nanoTime() - signalled) / 1_000_000;
                sentAtExit = first.requests() + second.requests();
                attemptsAtExit = sql.count("SELECT count(*) FROM webhook_delivery_attempts");
                // under a lease: due more than 10 s from now (a failed attempt's retry is due within the 200 ms
                // schedule)
                leasedAtExit = sql.count("SELECT count(*) FROM webhook_deliveries"
                        + " WHERE status = 'PENDING' AND next_attempt_at > now() + interval '10 seconds'");
                System.out.printf(
                        "terminated: stop %d ms; %d requests received, %d attempts recorded, %d deliveries left leased,"
                                + " %d succeeded (service log %s)%n",
                        stopMillis,
                        sentAtExit,
                        attemptsAtExit,
                        leasedAtExit,
                        sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'"),
                        service.log());
                // the drain's bound (quarkus.shutdown.timeout, 20 s) plus the rest of Quarkus's stop
                assertThat(stopMillis).as("the stop took (ms)").isLessThan(25_000);
            }

            try (QuarkusProcess service = start(db, "60s", "10s")) {
                // (on a stop that left deliveries leased, the rest waits for their lease to end)
                await().atMost(Duration.ofMinutes(4))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> sql.count("SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'")
                                == 2L * EVENTS);
            }
            long duplicates = 0;
            for (Receiver receiver : List.of(first, second)) {
                Set<String> ids = new HashSet<>();
                receiver.received().forEach(r -> ids.add(r.headers().get("webhook-id")));
                assertThat(ids).hasSize(EVENTS);
                duplicates += receiver.requests() - ids.size();
            }
            System.out.printf("after the restart: %d duplicate requests at the receivers%n", duplicates);
            assertThat(sentAtExit)
                    .as("requests received when the stopped service was gone, against the attempts it recorded")
                    .isEqualTo(attemptsAtExit);
            assertThat(leasedAtExit)
                    .as("deliveries left leased by the stopped service")
                    .isZero();
            assertThat(duplicates).as("events a receiver got twice").isZero();
            assertThat(sql.count("SELECT count(*) FROM webhook_deliveries d WHERE attempts <>"
                            + " (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)"))
                    .isZero();
        }
    }

    private static QuarkusProcess start(Postgres.Database db, String lease, String timeout) {
        Map<String, String> config = new HashMap<>(Map.of(
                "quarkus.datasource.reactive.url",
                db.reactiveUrl(),
                "quarkus.datasource.username",
                db.user(),
                "kafka.bootstrap.servers",
                Kafka.bootstrapServers(),
                "payments.webhooks.allow-http",
                "true",
                "payments.webhooks.allow-loopback",
                "true",
                "payments.webhooks.lease",
                lease,
                "payments.webhooks.timeout",
                timeout,
                "payments.webhooks.poll-interval",
                "100ms",
                "payments.webhooks.schedule",
                "200ms"));
        config.put("quarkus.log.console.json.enabled", "false");
        if (!db.password().isEmpty()) {
            config.put("quarkus.datasource.password", db.password());
        }
        return QuarkusProcess.start("webhook-delivery", "256m", config);
    }

    private static void createTopic() throws Exception {
        Kafka.deleteAllTopics();
        try (Admin admin = Kafka.admin()) {
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(250))
                    .until(() -> {
                        try {
                            admin.createTopics(List.of(new NewTopic("payment-events", 4, (short) 1)))
                                    .all()
                                    .get(60, TimeUnit.SECONDS);
                            return true;
                        } catch (ExecutionException e) {
                            if (e.getCause() instanceof TopicExistsException) {
                                return false;
                            }
                            throw e;
                        }
                    });
        }
    }

    private static void publish(List<String> values) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of("bootstrap.servers", Kafka.bootstrapServers(), "acks", "all"),
                new StringSerializer(),
                new StringSerializer())) {
            int i = 0;
            for (String value : values) {
                producer.send(new ProducerRecord<>("payment-events", Integer.toString(i++ % 16), value));
            }
            producer.flush();
        }
    }
}
