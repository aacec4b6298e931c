package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The relay sleeps with a poll interval far longer than this test, so every row here is published because a writer
 * woke it (V60, V100: writers notify only while the publisher sleeps, which it says by holding the fence lock). A lost
 * wake-up leaves a row unsent and fails. Falling asleep and waking write no row (V100: the flag of V60 was written
 * twice per wake-up).
 */
@QuarkusTest
class WakeUpTest {
    @Inject
    Vertx vertx;

    @Test
    void aSleepingRelayWakesOnCommitsAndNoWakeUpIsLostWhileItFallsAsleep() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("relay_wakeup");
        String topic = "relay-wakeup-" + UUID.randomUUID();
        Pool pool = RelayFixture.pool(vertx, db, 4);
        var config = RelayFixture.TestConfig.defaults().withPollInterval(Duration.ofMinutes(10));
        try (var relay = RelayFixture.replica("wakeup", vertx, db, Kafka.bootstrapServers(), config)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> relay.worker().isLeader() && sleeping(pool));
            String flagVersion = flagVersion(pool);

            // one row at a time: each wakes the sleeping relay
            for (int i = 0; i < 5; i++) {
                RelayFixture.insert(pool, topic, "pay-" + i, 1);
                await().atMost(Duration.ofSeconds(10)).until(() -> RelayFixture.count(pool, "sent_at IS NULL") == 0);
            }

            // four writers with gaps of 0-20 ms: commits land while the relay publishes, falls asleep and wakes
            ExecutorService writers = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    String key = "writer-" + w;
                    done.add(writers.submit(() -> {
                        for (int i = 0; i < 50; i++) {
                            RelayFixture.insert(pool, topic, key, 1);
                            Thread.sleep(ThreadLocalRandom.current().nextInt(21));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                writers.shutdown();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> RelayFixture.count(pool, "sent_at IS NULL") == 0);
            assertThat(RelayFixture.count(pool, "true")).isEqualTo(205);
            assertThat(relay.worker().problem()).isNull();
            await().atMost(Duration.ofSeconds(10)).until(() -> sleeping(pool));
            assertThat(flagVersion(pool))
                    .as("outbox_relay_state's row version (xmin): falling asleep and waking write no row")
                    .isEqualTo(flagVersion);
        } finally {
            pool.closeAndAwait();
        }
    }

    /** Whether a session holds the fence (hashtext('outbox-relay'), 2) exclusively: the publisher sleeps (V100). */
    private static boolean sleeping(Pool pool) {
        return pool.query(
                        """
                        SELECT EXISTS (SELECT 1 FROM pg_locks
                                        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database
                                                                                     WHERE datname = current_database())
                                          AND classid = hashtext('outbox-relay')::bit(32)::bigint::oid
                                          AND objid = 2 AND objsubid = 2 AND mode = 'ExclusiveLock' AND granted)""")
                .execute()
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next()
                .getBoolean(0);
    }

    private static String flagVersion(Pool pool) {
        return pool.query("SELECT xmin::text FROM outbox_relay_state")
                .execute()
                .await()
                .atMost(Duration.ofSeconds(10))
                .iterator()
                .next()
                .getString(0);
    }
}
