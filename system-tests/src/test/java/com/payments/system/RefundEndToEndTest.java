package com.payments.system;

import static com.payments.system.Merchant.KEY_A;
import static com.payments.system.Merchant.body;
import static com.payments.system.Merchant.capture;
import static com.payments.system.Merchant.count;
import static com.payments.system.Merchant.merchant;
import static com.payments.system.Merchant.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Refunds end to end: the packaged payments-api, outbox-relay and refunds-worker as their own processes, the real
 * broker, the real PSP sandbox and one database.
 */
class RefundEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(60);
    private static final List<AutoCloseable> PROCESSES = new ArrayList<>();
    private static Postgres.Database db;
    private static String pspUrl;
    private static String bootstrap;

    @BeforeAll
    static void startServices() {
        db = Postgres.freshDatabase("e2e");
        bootstrap = Kafka.bootstrapServers();
        Stack.recreateTopics();
        PspSandbox psp = PspSandbox.start(Map.of("psp.timeout-delay", "8s"));
        PROCESSES.add(psp);
        pspUrl = psp.url();
        QuarkusProcess api = Stack.paymentsApi(db, pspUrl, Map.of());
        PROCESSES.add(api);
        Merchant.use(api);
        Map<String, String> common = new HashMap<>(Stack.datasource(db));
        common.put("kafka.bootstrap.servers", bootstrap);
        common.put("quarkus.log.level", "WARN");
        PROCESSES.add(QuarkusProcess.start("outbox-relay", "256m", common));
        Map<String, String> worker = new HashMap<>(common);
        worker.put("psp.url", pspUrl);
        PROCESSES.add(QuarkusProcess.start("refunds-worker", "256m", worker));
        Merchant.warmUp(pspUrl);
    }

    @AfterAll
    static void stopServices() throws Exception {
        Stack.stopAll(PROCESSES);
    }

    @Test
    void refundSucceedsWithOnePspRefundBalancedLedgerAndEvent() throws Exception {
        UUID paymentId = captured("tok_visa", 10_000);
        UUID refundId = refund(paymentId, 2_500);

        awaitStatus(refundId, "SUCCEEDED");
        assertThat(pspCounters(refundId).getInteger("refundMovements")).isEqualTo(1);
        assertThat(pspCounters(refundId).getInteger("refundRequests")).isEqualTo(1);
        try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                PreparedStatement query = sql.prepareStatement(
                        """
                        SELECT count(*) AS entries, sum(e.amount) AS total,
                               sum(e.amount) FILTER (WHERE e.account = 'merchant_payable') AS payable
                          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'REFUND' AND t.reference = ?""")) {
            query.setString(1, refundId.toString());
            try (ResultSet ledger = query.executeQuery()) {
                ledger.next();
                assertThat(ledger.getLong("entries")).isEqualTo(2);
                assertThat(ledger.getLong("total")).isZero();
                assertThat(ledger.getLong("payable")).isEqualTo(2_500);
            }
        }
        assertThat(refundedAmount(paymentId)).isEqualTo(2_500);

        List<JsonObject> events = Stack.paymentEvents(bootstrap, paymentId, "RefundSucceeded", 1, OUTCOME);
        assertThat(events.get(0).getString("refundId")).isEqualTo(refundId.toString());
        assertThat(events.get(0).getLong("amount")).isEqualTo(2_500);
        assertThat(events.get(0).getString("pspReference")).startsWith("re_");
    }

    @Test
    void declinedRefundIsReleasedOnceEvenWhenItsCommandIsDeliveredTwice() {
        UUID paymentId = captured("tok_refundFails", 10_000);
        UUID first = refund(paymentId, 4_000);
        awaitStatus(first, "FAILED");
        assertThat(refundedAmount(paymentId)).isZero();

        // deliver the first command again through the relay (same event id), then a second refund of 6,000 on the
        // same payment: same key, same partition, so the worker handles the duplicate before the second refund.
        // A second release of 4,000 would leave 2,000 reserved (or make the second release fail its CHECK).
        Merchant.execute(
                db,
                "UPDATE outbox SET sent_at = NULL WHERE topic = 'refund-commands' AND payload->>'refundId' = ?",
                first.toString());
        UUID second = refund(paymentId, 6_000);
        awaitStatus(second, "FAILED");
        assertThat(count(
                        db,
                        "SELECT count(*) FROM outbox WHERE topic = 'refund-commands' AND sent_at IS NULL AND key = ?",
                        paymentId.toString()))
                .isZero();
        assertThat(refundedAmount(paymentId)).isZero();
        assertThat(pspCounters(first).getInteger("refundRequests")).isEqualTo(1);
        assertThat(pspCounters(first).getInteger("refundMovements")).isZero();
        assertThat(count(
                        db,
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = ?",
                        first.toString()))
                .isZero();
        List<JsonObject> failed = Stack.paymentEvents(bootstrap, paymentId, "RefundFailed", 2, OUTCOME);
        assertThat(failed.stream().map(e -> e.getString("refundId")).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder(first.toString(), second.toString());
        Response payment = merchant(KEY_A).get("/v1/payments/" + paymentId);
        assertThat(payment.<Integer>path("refundableAmount")).isEqualTo(10_000);
    }

    private UUID captured(String source, long amount) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), amount, "EUR", source));
        response.then().statusCode(201);
        return UUID.fromString(response.path("id"));
    }

    private static UUID refund(UUID paymentId, long amount) {
        Response response = merchant(KEY_A)
                .header("Idempotency-Key", unique("r"))
                .contentType(ContentType.JSON)
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + paymentId + "/refunds");
        response.then().statusCode(202);
        return UUID.fromString(response.path("refundId"));
    }

    private static void awaitStatus(UUID refundId, String status) {
        await().atMost(OUTCOME)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> merchant(KEY_A).get("/v1/refunds/" + refundId).path("status"), status::equals);
    }

    private JsonObject pspCounters(UUID reference) {
        return new JsonObject(
                Merchant.psp(pspUrl).get("/test/counters/" + reference).asString());
    }

    private long refundedAmount(UUID paymentId) {
        return count(db, "SELECT refunded_amount FROM payments WHERE id = ?", paymentId);
    }
}
