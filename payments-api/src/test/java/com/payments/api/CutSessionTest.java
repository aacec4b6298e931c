package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.common.DatabaseUnavailable;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A statement given to a session the server has just cut (a failover ends every session) fails as "database
 * unavailable", so the merchant gets 503 + Retry-After, not 500: whatever the client library raises for it. A pooled
 * connection can be handed out in the moment between the cut and the pool's eviction, and a transaction's next
 * statement meets the cut session (DatabaseUnavailableTest once got 500 so in CI).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class CutSessionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    Pool pool;

    @Test
    void aStatementOnASessionTheServerCutIsDatabaseUnavailable() throws InterruptedException {
        SqlConnection session = pool.getConnection().await().atMost(WAIT);
        CountDownLatch closed = new CountDownLatch(1);
        session.closeHandler(closed::countDown);
        int pid = session.query("SELECT pg_backend_pid()")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getInteger(0);

        pool.preparedQuery("SELECT pg_terminate_backend($1)")
                .execute(Tuple.of(pid))
                .await()
                .atMost(WAIT);
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();

        Throwable failure = session.query("SELECT 1")
                .execute()
                .onItemOrFailure()
                .transform((rows, error) -> error)
                .await()
                .atMost(WAIT);
        assertThat(failure).isNotNull();
        assertThat(DatabaseUnavailable.causedBy(failure))
                .as("%s is database unavailable", failure)
                .isTrue();
        session.close().await().atMost(WAIT);
    }
}
