package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.Kafka;
import com.payments.infra.Postgres;
import com.payments.infra.PspSandbox;
import com.payments.infra.QuarkusProcess;
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
import org.junit.jupiter.api.Test;

/**
 * A Stripe dispute end to end (issue 20): the packaged payments-api with {@code psp.provider=stripe}, psp-sandbox's
 * Stripe mode sending its signed events to payments-api's Stripe route, outbox-relay and the real broker. A charge of
 * {@code pm_card_createDispute} whose answer we never got (the payment is UNKNOWN) is captured by
 * {@code payment_intent.succeeded} and disputed by {@code charge.dispute.created}, sent at once in any order: both
 * reach {@code payment-events} once, {@code PaymentDisputed} with the dispute's fields.
 */
class DisputeEndToEndTest {
    private static final Duration OUTCOME = Duration.ofSeconds(90);
    private static final String SECRET = "whsec_dispute_e2e";
    private static final UUID MERCHANT_A = UUID.fromString("00000000-0000-4000-8000-00000000000a");

    @Test
    void aStripeDisputeReachesPaymentEventsOnceAsPaymentDisputed() throws Exception {
        Postgres.Database db = Postgres.freshDatabase("dispute");
        String bootstrap = Kafka.bootstrapServers();
        Stack.recreateTopics();
        List<AutoCloseable> processes = new ArrayList<>();
        try {
            // payments-api makes no PSP call here: the sandbox's events are its only PSP traffic
            QuarkusProcess api = Stack.paymentsApi(
                    db,
                    "http://127.0.0.1:9",
                    Map.of(
                            "psp.provider", "stripe",
                            "psp.stripe.api-key", "sk_test_dispute_e2e",
                            "psp.stripe.webhook-secrets", SECRET));
            processes.add(api);
            PspSandbox psp = PspSandbox.start(Map.of(
                    "psp.stripe.webhook-url",
                    api.url() + "/v1/psp/stripe/webhooks",
                    "psp.stripe.webhook-secrets",
                    SECRET));
            processes.add(psp);
            Map<String, String> relay = new HashMap<>(Stack.datasource(db));
            relay.put("kafka.bootstrap.servers", bootstrap);
            relay.put("quarkus.log.level", "WARN");
            processes.add(QuarkusProcess.start("outbox-relay", "256m", relay));

            UUID paymentId = UUID.randomUUID();
            try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                    PreparedStatement insert = sql.prepareStatement(
                            """
                            INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status)
                            VALUES (?, ?, ?, 4200, 'EUR', 'pm_card_createDispute', 'UNKNOWN')""")) {
                insert.setObject(1, paymentId);
                insert.setObject(2, MERCHANT_A);
                insert.setString(3, "order-" + paymentId);
                insert.executeUpdate();
            }
            Merchant.psp(psp.url())
                    .header("Authorization", "Bearer sk_test_dispute_e2e")
                    .header("Idempotency-Key", paymentId.toString())
                    .contentType("application/x-www-form-urlencoded")
                    .formParam("amount", 4200)
                    .formParam("currency", "eur")
                    .formParam("confirm", "true")
                    .formParam("payment_method", "pm_card_createDispute")
                    .formParam("metadata[payment_id]", paymentId.toString())
                    .post("/stripe/v1/payment_intents")
                    .then()
                    .statusCode(200);

            JsonObject disputed = Stack.paymentEvents(bootstrap, paymentId, "PaymentDisputed", 1, OUTCOME)
                    .get(0);
            JsonObject captured = Stack.paymentEvents(bootstrap, paymentId, "PaymentCaptured", 1, OUTCOME)
                    .get(0);
            assertThat(disputed.getString("paymentId")).isEqualTo(paymentId.toString());
            assertThat(disputed.getString("merchantId")).isEqualTo(MERCHANT_A.toString());
            assertThat(disputed.getLong("amount")).isEqualTo(4200);
            assertThat(disputed.getString("currency")).isEqualTo("EUR");
            assertThat(disputed.getString("pspReference"))
                    .startsWith("pi_")
                    .isEqualTo(captured.getString("pspReference"));
            assertThat(disputed.getString("disputeId")).startsWith("dp_");
            assertThat(disputed.getString("reason")).isEqualTo("fraudulent");
            try (Connection sql = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                    PreparedStatement query = sql.prepareStatement(
                            """
                            SELECT count(*) FROM operations_queue
                             WHERE subject_type = 'payment' AND subject_id = ? AND reason = 'payment_disputed'
                               AND details ->> 'disputeId' = ?""")) {
                query.setString(1, paymentId.toString());
                query.setString(2, disputed.getString("disputeId"));
                try (ResultSet rows = query.executeQuery()) {
                    rows.next();
                    assertThat(rows.getLong(1)).isEqualTo(1);
                }
            }
        } finally {
            Stack.stopAll(processes);
        }
    }
}
