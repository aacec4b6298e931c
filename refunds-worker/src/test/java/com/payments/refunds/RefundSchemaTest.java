package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

@QuarkusTest
@QuarkusTestResource(PostgresTestResource.class)
@QuarkusTestResource(KafkaTestResource.class)
class RefundSchemaTest {
    @Inject
    Pool pool;

    @Test
    void pendingRefundRowRoundTrips() {
        var row = pool.withTransaction(conn -> conn.preparedQuery(
                                """
                                WITH m AS (INSERT INTO merchants (name) VALUES ('refunds') RETURNING id),
                                     p AS (INSERT INTO payments (merchant_id, order_id, amount, currency, source)
                                           SELECT id, 'o-1', 500, 'EUR', 'tok_visa' FROM m RETURNING id, merchant_id)
                                INSERT INTO refunds (payment_id, merchant_id, amount, currency)
                                SELECT id, merchant_id, $1, 'EUR' FROM p RETURNING status, amount""")
                        .execute(Tuple.of(200L)))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(row.getString("status")).isEqualTo("PENDING");
        assertThat(row.getLong("amount")).isEqualTo(200L);
    }
}
