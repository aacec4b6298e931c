package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Refunds with {@code psp.provider=stripe}, against the sandbox's Stripe mode: the module's global test resources
 * start PostgreSQL, Kafka and the sandbox on loopback, and the test profile points {@code psp.stripe.api-base} at the
 * sandbox's {@code /stripe}.
 */
@QuarkusTest
@TestProfile(StripeRefundTest.Stripe.class)
class StripeRefundTest {
    static final String API_KEY = "sk_test_refunds_worker";

    /** The Stripe adapter with a test key, as a deployment sets {@code PSP_PROVIDER} and {@code STRIPE_API_KEY}. */
    public static class Stripe implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("psp.provider", "stripe", "psp.stripe.api-key", API_KEY);
        }
    }

    @Inject
    PspPort psp;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @AfterEach
    void noFaults() {
        Fixtures.current().resetPspFaults();
        RestAssured.given().baseUri(pspUrl).delete("/test/clock").then().statusCode(200);
    }

    /** A payment captured at Stripe, and the refund of it whose command was published. */
    private record Requested(Fixtures.Captured payment, UUID refundId) {}

    private static Requested requestRefund(Fixtures fx, String paymentMethod, long amount, long refund) {
        Fixtures.Captured payment = fx.captureAtStripe(API_KEY, paymentMethod, amount);
        UUID refundId = fx.reserve(payment, refund);
        fx.publish(fx.command(payment, refundId, refund));
        return new Requested(payment, refundId);
    }

    @Test
    void aRefundOfAPaymentIntentSucceedsOnce() {
        assertThat(psp.provider()).isEqualTo("stripe");
        Fixtures fx = Fixtures.current();
        Requested requested = requestRefund(fx, "pm_card_visa", 8_000, 3_000);
        UUID refundId = requested.refundId();

        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.refund(refundId).getString("psp_reference")).startsWith("re_");
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(fx.refundedAmount(requested.payment().paymentId())).isEqualTo(3_000);
    }

    @Test
    void aPendingRefundThatFailsLaterIsFoundByTheSyncAndReleasesTheReservationOnce() {
        Fixtures fx = Fixtures.current();
        Requested requested = requestRefund(fx, "pm_card_refundFail", 5_000, 2_000);
        UUID refundId = requested.refundId();

        // Stripe answers pending (the refund stays PENDING); the sync's look-up later finds it failed
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("FAILED"));
        assertThat(fx.refund(refundId).getString("failure_code")).isEqualTo("expired_or_canceled_card");
        assertThat(fx.refundedAmount(requested.payment().paymentId()))
                .as("reservation released")
                .isZero();
    }

    @Test
    void aReplayed500WhereStripeDidMakeTheRefundIsFoundInTheRefundListAndRefundsOnce() {
        Fixtures fx = Fixtures.current();
        Fixtures.Captured payment = fx.captureAtStripe(API_KEY, "pm_card_visa", 6_000);
        UUID refundId = UUID.randomUUID();
        RefundRequest request =
                new RefundRequest(refundId.toString(), payment.paymentId().toString(), payment.charge(), 2_000, "EUR");
        fx.pspFaults("{\"errorRate\": 1.0}");
        RefundResult first;
        try {
            first = psp.refund(request).await().atMost(Fixtures.WAIT);
        } finally {
            fx.resetPspFaults();
        }
        assertThat(first.status()).isEqualTo(RefundResult.Status.UNKNOWN);
        // Stripe answered 500 but made the refund (the sandbox's 500 makes nothing: made here under another key, with
        // our metadata)
        RestAssured.given()
                .baseUri(pspUrl + "/stripe")
                .header("Authorization", "Bearer " + API_KEY)
                .header("Idempotency-Key", "elsewhere-" + refundId)
                .contentType("application/x-www-form-urlencoded")
                .formParam("payment_intent", payment.charge())
                .formParam("amount", 2_000)
                .formParam("metadata[refund_id]", refundId.toString())
                .post("/v1/refunds")
                .then()
                .statusCode(200);

        RefundResult again = psp.refund(request).await().atMost(Fixtures.WAIT);

        assertThat(again.status()).as("the replayed 500 looked up").isEqualTo(RefundResult.Status.SUCCEEDED);
        assertThat(again.pspRefundId()).startsWith("re_");
        assertThat(fx.pspRefundMovements(refundId)).as("refunded once").isEqualTo(1);
    }

    @Test
    void aReplayed500WhereStripeMadeNoRefundStaysPendingWithOneItemThenRefundsOnceAfterTheKeyWindow() {
        Fixtures fx = Fixtures.current();
        Fixtures.Captured payment = fx.captureAtStripe(API_KEY, "pm_card_visa", 7_000);
        UUID refundId = fx.reserve(payment, 2_500);
        fx.pspFaults("{\"errorRate\": 1.0}");
        try {
            fx.publish(fx.command(payment, refundId, 2_500));
            await().atMost(Fixtures.WAIT).until(() -> fx.pspRefundRequests(refundId) >= 1);
        } finally {
            fx.resetPspFaults();
        }

        // the sync's re-sends get the 500 Stripe keeps under the key; the refund list shows nothing
        String item = "SELECT count(*) FROM operations_queue WHERE subject_type = 'refund' AND subject_id = $1"
                + " AND status = 'OPEN' AND details ->> 'lastError' LIKE '%the PSP replays a 500 under the key%'";
        await().atMost(Fixtures.WAIT).until(() -> fx.count(item, refundId.toString()) == 1);
        int requests = fx.pspRefundRequests(refundId);
        await().atMost(Fixtures.WAIT).until(() -> fx.pspRefundRequests(refundId) >= requests + 2);
        assertThat(fx.status(refundId)).isEqualTo("PENDING");
        assertThat(fx.pspRefundMovements(refundId)).isZero();
        assertThat(fx.refundedAmount(payment.paymentId()))
                .as("reservation kept")
                .isEqualTo(2_500);
        assertThat(fx.count(
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'refund' AND subject_id = $1",
                        refundId.toString()))
                .as("one item, not one per attempt")
                .isEqualTo(1);

        // 25 h later Stripe has forgotten the key (the sandbox clock): the sync's re-send refunds, once
        RestAssured.given()
                .baseUri(pspUrl)
                .contentType("application/json")
                .body("{\"instant\":\"" + Instant.now().plus(Duration.ofHours(25)) + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundMovements(refundId)).as("refunded once").isEqualTo(1);
        assertThat(fx.count(
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'refund' AND subject_id = $1"
                                + " AND status = 'OPEN'",
                        refundId.toString()))
                .as("the final outcome resolves the item")
                .isZero();
    }
}
