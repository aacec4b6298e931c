package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.idempotency.IdempotencyCleanupJob;
import com.payments.api.resolver.PaymentResolver;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The housekeeping job never deletes the key of a payment or refund that is not final, and counts the retention
 * (24 h in tests as in production) from the final outcome. Keys and payments are aged in SQL.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class IdempotencyRetentionTest {
    @Inject
    Pool pool;

    @Inject
    IdempotencyCleanupJob cleanup;

    @Inject
    PaymentResolver resolver;

    @Inject
    CircuitBreakerMaintenance breakers;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @BeforeEach
    void warmUp() {
        TestSupport.warmUp(pspUrl, breakers);
    }

    @AfterEach
    void resetFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        breakers.resetAll();
    }

    @Test
    void keyOfAPaymentStillUnknownPastTheRetentionIsKeptAndTheRetryIsAReplayNotASecondCharge() {
        String key = unique("key");
        String orderId = unique("order");
        String json = body(orderId, 3100, "EUR", "tok_visa");
        Response first = unknownCapture(key, json);
        UUID id = UUID.fromString(first.path("id"));

        // 25 h later the PSP's lookups have kept failing: the payment is still UNKNOWN
        ageKey(key, Duration.ofHours(25));
        cleanup.purgeExpired().await().indefinitely();

        Response retry = capture(KEY_A, key, json);
        assertThat(retry.statusCode()).as("a replay of the UNKNOWN payment").isEqualTo(202);
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(retry.asByteArray()).isEqualTo(first.asByteArray());
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE order_id = $1", orderId))
                .as("no second payment")
                .isEqualTo(1);

        // the first payment is resolved later: charged once, and the key still answers with it
        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));
        Response after = capture(KEY_A, key, json);
        after.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(after.<String>path("id")).isEqualTo(id.toString());
        assertThat(TestSupport.pspCounters(pspUrl, id).<Integer>path("chargeMovements"))
                .isEqualTo(1);
    }

    @Test
    void retentionOfAPaymentKeyCountsFromTheFinalOutcome() {
        String key = unique("key");
        String json = body(unique("order"), 3200, "EUR", "tok_visa");
        UUID id = UUID.fromString(unknownCapture(key, json).path("id"));
        ageKey(key, Duration.ofHours(25));

        // resolved now, 25 h after the key was stored: kept for another 24 h
        resolveUntil(() -> paymentStatus(pool, id).equals("CAPTURED"));
        cleanup.purgeExpired().await().indefinitely();
        assertThat(keys(key)).as("final for less than the retention").isEqualTo(1);

        ageFinalOutcome(key, Duration.ofHours(23));
        cleanup.purgeExpired().await().indefinitely();
        assertThat(keys(key)).as("final for 23 h").isEqualTo(1);

        ageFinalOutcome(key, Duration.ofHours(2));
        cleanup.purgeExpired().await().indefinitely();
        assertThat(keys(key)).as("final for 25 h").isZero();
    }

    @Test
    void keyOfACapturedPaymentIsPurgedOnceFinalForLongerThanTheRetention() {
        String key = unique("key");
        capture(KEY_A, key, body(unique("order"), 3300, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
        ageKey(key, Duration.ofHours(25));
        ageFinalOutcome(key, Duration.ofHours(25));

        cleanup.purgeExpired().await().indefinitely();

        assertThat(keys(key)).isZero();
    }

    @Test
    void keyOfARefundIsKeptWhileTheRefundIsPendingAndPurgedOnceFinalForLongerThanTheRetention() {
        Response payment = capture(KEY_A, unique("key"), body(unique("order"), 5000, "EUR", "tok_visa"));
        payment.then().statusCode(201);
        UUID paymentId = UUID.fromString(payment.path("id"));
        String key = unique("refund-key");
        String json = "{\"amount\":1200}";
        Response first = refund(paymentId, key, json);
        first.then().statusCode(202);
        UUID refundId = UUID.fromString(first.path("refundId"));

        // 25 h later refunds-worker has not settled it (it is not running here): still PENDING
        ageKey(key, Duration.ofHours(25));
        cleanup.purgeExpired().await().indefinitely();

        Response retry = refund(paymentId, key, json);
        assertThat(retry.statusCode()).isEqualTo(202);
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(retry.asByteArray()).isEqualTo(first.asByteArray());
        assertThat(count(pool, "SELECT count(*) FROM refunds WHERE payment_id = $1", paymentId))
                .as("no second refund")
                .isEqualTo(1);

        // settled as refunds-worker does it (one statement): the retention starts now
        pool.preparedQuery(
                        """
                        UPDATE refunds SET status = 'SUCCEEDED', psp_reference = 're_test', completed_at = now()
                         WHERE id = $1""")
                .execute(Tuple.of(refundId))
                .await()
                .indefinitely();
        cleanup.purgeExpired().await().indefinitely();
        assertThat(keys(key)).as("final just now").isEqualTo(1);

        ageFinalOutcome(key, Duration.ofHours(25));
        cleanup.purgeExpired().await().indefinitely();
        assertThat(keys(key)).isZero();
    }

    /** A capture whose PSP answer was an error: 202 UNKNOWN, key completed with it; the PSP is healthy again after. */
    private Response unknownCapture(String key, String json) {
        Fixtures.faults(pspUrl, "{\"errorRate\":1.0}");
        Response unknown = capture(KEY_A, key, json);
        unknown.then().statusCode(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        breakers.resetAll();
        return unknown;
    }

    private Response refund(UUID paymentId, String key, String json) {
        return merchant(KEY_A)
                .header("Idempotency-Key", key)
                .contentType(ContentType.JSON)
                .body(json)
                .post("/v1/payments/" + paymentId + "/refunds");
    }

    /**
     * Moves the key's creation and completion back. (The payment's createdAt is left alone: it is part of the answer
     * the replay must reproduce byte for byte, and the purge does not read it.)
     */
    private void ageKey(String key, Duration by) {
        pool.preparedQuery(
                        """
                        UPDATE idempotency_keys
                           SET created_at = created_at - make_interval(secs => $2),
                               completed_at = completed_at - make_interval(secs => $2)
                         WHERE merchant_id = $1 AND key = $3""")
                .execute(Tuple.of(Fixtures.MERCHANT_A, (double) by.toSeconds(), key))
                .await()
                .indefinitely();
    }

    /** Moves the moment the key's payment or refund became final back. */
    private void ageFinalOutcome(String key, Duration by) {
        long aged = pool.preparedQuery(
                        """
                        UPDATE idempotency_keys SET final_at = final_at - make_interval(secs => $2)
                         WHERE merchant_id = $1 AND key = $3 AND final_at IS NOT NULL""")
                .execute(Tuple.of(Fixtures.MERCHANT_A, (double) by.toSeconds(), key))
                .await()
                .indefinitely()
                .rowCount();
        assertThat(aged).as("the key is final").isEqualTo(1);
    }

    private long keys(String key) {
        return count(
                pool,
                "SELECT count(*) FROM idempotency_keys WHERE merchant_id = $1 AND key = $2",
                Fixtures.MERCHANT_A,
                key);
    }

    private void resolveUntil(java.util.function.BooleanSupplier done) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return done.getAsBoolean();
                });
    }
}
