package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Postgres;
import com.payments.infra.RestartableKafka;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The broker stopped for a while and started again: rows wait, the relay reports a problem, then catches up. */
@QuarkusTest
class BrokerRestartTest {
    @Inject
    Vertx vertx;

    @Test
    void keepsRowsWhileTheBrokerIsDownAndPublishesThemWhenItReturns() {
        Postgres.Database db = Postgres.freshDatabase("relay_broker");
        String topic = "relay-broker-" + UUID.randomUUID();
        Pool pool = RelayFixture.pool(vertx, db, 2);
        try (RestartableKafka kafka = RestartableKafka.start();
                var relay = RelayFixture.replica(
                        "broker", vertx, db, kafka.bootstrapServers(), RelayFixture.TestConfig.defaults())) {
            List<UUID> before = RelayFixture.insert(pool, topic, "pay-1", 200);
            await().atMost(Duration.ofSeconds(60)).until(() -> RelayFixture.count(pool, "sent_at IS NULL") == 0);
            // The round that marked the rows sent clears the start-up state right after its commit.
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.worker().problem() == null);

            kafka.stopBroker();
            List<UUID> during = RelayFixture.insert(pool, topic, "pay-1", 300);
            await().atMost(Duration.ofSeconds(60)).until(() -> relay.worker().problem() != null);
            assertThat(relay.metrics().publishErrorsTotal()).isPositive();
            assertThat(RelayFixture.count(pool, "sent_at IS NULL"))
                    .as("nothing is marked sent while the broker is down")
                    .isEqualTo(300);

            kafka.startBroker();
            await().atMost(Duration.ofSeconds(90)).until(() -> RelayFixture.count(pool, "sent_at IS NULL") == 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> relay.worker().problem() == null);

            Set<String> expected = new HashSet<>();
            for (UUID id : concat(before, during)) {
                expected.add(id.toString());
            }
            Set<String> onKafka = new HashSet<>();
            RelayFixture.readAll(kafka.bootstrapServers(), topic, expected.size(), Duration.ofSeconds(60))
                    .forEach(r -> onKafka.add(RelayFixture.eventId(r)));
            assertThat(onKafka).isEqualTo(expected);
        } finally {
            pool.closeAndAwait();
        }
    }

    private static List<UUID> concat(List<UUID> a, List<UUID> b) {
        List<UUID> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
