package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Two relay replicas (own pools, own control connections, own producers) on one database: 10,000 events of 500
 * payments written by concurrent transactions that commit out of id order reach Kafka, each payment's events in
 * commit order, also when the publishing replica stops half way and the other takes over.
 */
@QuarkusTest
class TwoRelaysOrderTest {
    private static final int PAYMENTS = 500;
    private static final int EVENTS_PER_PAYMENT = 20;
    private static final int EVENTS = PAYMENTS * EVENTS_PER_PAYMENT;

    @Inject
    Vertx vertx;

    @Test
    void everyEventArrivesInCommitOrderPerPaymentWithTwoReplicasAndATakeover() {
        Postgres.Database db = Postgres.freshDatabase("relay_order");
        String topic = "relay-order-" + UUID.randomUUID();
        Pool writers = RelayFixture.pool(vertx, db, 24);
        // The writers' own record of commit order: a counter row per payment, bumped in the same transaction
        // after the outbox insert; its row lock is held to commit, so n is the commit position of the payment.
        writers.query("CREATE TABLE commit_order (key text PRIMARY KEY, n int NOT NULL)")
                .execute()
                .await()
                .atMost(Duration.ofSeconds(60));
        var config = RelayFixture.TestConfig.defaults().withBatchSize(200);
        try (var a = RelayFixture.replica("a", vertx, db, Kafka.bootstrapServers(), config);
                var b = RelayFixture.replica("b", vertx, db, Kafka.bootstrapServers(), config)) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> a.worker().isLeader() || b.worker().isLeader());
            var first = a.worker().isLeader() ? a : b;
            var second = first == a ? b : a;
            assertThat(second.worker().isLeader()).as("only one publisher").isFalse();

            List<String> work = new ArrayList<>(EVENTS);
            IntStream.range(0, PAYMENTS)
                    .forEach(p -> Collections.addAll(
                            work,
                            Collections.nCopies(EVENTS_PER_PAYMENT, "pay-" + p).toArray(String[]::new)));
            Collections.shuffle(work);
            Uni<Void> writing = Multi.createFrom()
                    .iterable(work)
                    .onItem()
                    .transformToUni(key -> writeOne(writers, topic, key))
                    .merge(24)
                    .collect()
                    .last()
                    .replaceWithVoid();
            var pending = writing.subscribeAsCompletionStage();

            // Half way through, the publisher stops; the standby must take over and finish.
            await().atMost(Duration.ofMinutes(3))
                    .until(() -> RelayFixture.count(writers, "sent_at IS NOT NULL") >= EVENTS / 3);
            first.worker().stop();
            await().atMost(Duration.ofSeconds(60)).until(() -> second.worker().isLeader());

            pending.join();
            await().atMost(Duration.ofMinutes(3)).until(() -> RelayFixture.count(writers, "sent_at IS NULL") == 0);
            assertThat(first.metrics().publishedTotal()).isPositive();
            assertThat(second.metrics().publishedTotal()).isPositive();
        } finally {
            writers.closeAndAwait();
        }

        List<ConsumerRecord<String, String>> records =
                RelayFixture.readAll(Kafka.bootstrapServers(), topic, EVENTS, Duration.ofMinutes(2));
        Map<String, List<Integer>> orderSeen = new HashMap<>();
        Set<String> firstSeen = new HashSet<>();
        for (ConsumerRecord<String, String> record : records) {
            if (firstSeen.add(RelayFixture.eventId(record))) { // consumers deduplicate by event id
                orderSeen
                        .computeIfAbsent(record.key(), k -> new ArrayList<>())
                        .add(new JsonObject(record.value()).getInteger("n"));
            }
        }
        List<Integer> commitOrder =
                IntStream.rangeClosed(1, EVENTS_PER_PAYMENT).boxed().toList();
        assertThat(orderSeen).hasSize(PAYMENTS);
        orderSeen.forEach((key, seen) -> assertThat(seen).as(key).isEqualTo(commitOrder));
    }

    /** One transaction: outbox row, a random pause (so commits overtake one another), commit position. */
    private static Uni<Void> writeOne(Pool pool, String topic, String key) {
        UUID eventId = UUID.randomUUID();
        double pause = ThreadLocalRandom.current().nextInt(3) / 1000.0;
        return pool.withTransaction(conn -> conn.preparedQuery(
                                """
                                INSERT INTO outbox (event_id, event_type, topic, key, payload)
                                VALUES ($1, 'PaymentCaptured', $2, $3, '{}') RETURNING id""")
                        .execute(Tuple.of(eventId, topic, key))
                        .call(() -> conn.preparedQuery("SELECT pg_sleep($1)").execute(Tuple.of(pause)))
                        .call(() -> conn.preparedQuery(
                                        """
                                        WITH c AS (INSERT INTO commit_order VALUES ($1, 1)
                                                   ON CONFLICT (key) DO UPDATE SET n = commit_order.n + 1
                                                   RETURNING n)
                                        UPDATE outbox SET payload = jsonb_build_object('n', (SELECT n FROM c))
                                        WHERE event_id = $2""")
                                .execute(Tuple.of(key, eventId))))
                .replaceWithVoid();
    }
}
