package com.payments.recon;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

@QuarkusTest
@QuarkusTestResource(PostgresTestResource.class)
class SettlementSchemaTest {
    @Inject
    Pool pool;

    @Test
    void settlementLineRoundTrips() {
        var row = pool.query(
                        """
                        INSERT INTO psp_settlements (business_date, line_no, psp_reference, type, reference, amount, fee,
                                                     currency, settled_at)
                        VALUES ('2026-11-29', 1, 'ch_1', 'CHARGE', 'p-1', 1000, 59, 'EUR', '2026-11-29T10:00:00Z')
                        RETURNING amount - fee AS net""")
                .execute()
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(row.getLong("net")).isEqualTo(941L);
    }
}
