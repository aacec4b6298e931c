package com.payments.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@QuarkusTest
@QuarkusTestResource(PostgresTestResource.class)
@QuarkusTestResource(KafkaTestResource.class)
class OutboxSchemaTest {
    @Inject
    Pool pool;

    @Test
    void unsentOutboxRowIsVisibleToTheRelay() {
        UUID eventId = UUID.randomUUID();
        pool.preparedQuery(
                        """
                        INSERT INTO outbox (event_id, event_type, topic, key, payload)
                        VALUES ($1, 'PaymentCaptured', 'payment-events', 'p-1', '{"amount": 10}'::jsonb)""")
                .execute(Tuple.of(eventId))
                .await()
                .indefinitely();
        var row = pool.preparedQuery("SELECT payload ->> 'amount' AS amount, sent_at FROM outbox WHERE event_id = $1")
                .execute(Tuple.of(eventId))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(row.getString("amount")).isEqualTo("10");
        assertThat(row.getValue("sent_at")).isNull();
    }
}
