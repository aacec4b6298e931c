package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.is;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class SchemaOwnerTest {
    @Inject
    Pool pool;

    @Test
    void startsOnTheMigratedSchemaAndReportsReady() {
        TestSupport.management()
                .when()
                .get("/q/health/ready")
                .then()
                .statusCode(200)
                .body("status", is("UP"));
    }

    @Test
    void paymentRowRoundTripsThroughTheReactiveClient() {
        var row = pool.withTransaction(
                        conn -> conn.preparedQuery("INSERT INTO merchants (name) VALUES ($1) RETURNING id")
                                .execute(Tuple.of("schema-owner"))
                                .map(rows -> rows.iterator().next().getUUID(0))
                                .flatMap(merchant -> conn.preparedQuery(
                                                """
                                        INSERT INTO payments (merchant_id, order_id, amount, currency, source)
                                        VALUES ($1, 'order-1', 1999, 'EUR', 'tok_visa')
                                        RETURNING status, refunded_amount, amount""")
                                        .execute(Tuple.of(merchant))))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(row.getString("status")).isEqualTo("PROCESSING");
        assertThat(row.getLong("refunded_amount")).isZero();
        assertThat(row.getLong("amount")).isEqualTo(1999L);
    }
}
