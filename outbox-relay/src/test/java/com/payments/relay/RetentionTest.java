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
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Published rows past the retention are deleted in bounded batches; younger ones stay. */
@QuarkusTest
class RetentionTest {
    @Inject
    Vertx vertx;

    @Test
    void deletesPublishedRowsOlderThanTheRetentionInBatches() {
        Postgres.Database db = Postgres.freshDatabase("relay_retention");
        String topic = "relay-retention-" + UUID.randomUUID();
        Pool pool = RelayFixture.pool(vertx, db, 2);
        var config =
                RelayFixture.TestConfig.defaults().withRetention(Duration.ofSeconds(5), Duration.ofMillis(100), 40);
        try (var relay = RelayFixture.replica("retention", vertx, db, Kafka.bootstrapServers(), config)) {
            RelayFixture.insert(pool, topic, "pay-1", 300);
            await().atMost(Duration.ofSeconds(60)).until(() -> RelayFixture.count(pool, "sent_at IS NULL") == 0);
            // published less than the retention ago: still there
            assertThat(RelayFixture.count(pool, "true")).isEqualTo(300);
            await().atMost(Duration.ofSeconds(60)).until(() -> RelayFixture.count(pool, "true") == 0);
            assertThat(relay.worker().problem()).isNull();
        } finally {
            pool.closeAndAwait();
        }
    }
}
