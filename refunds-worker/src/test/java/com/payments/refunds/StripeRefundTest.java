package com.payments.refunds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.payments.psp.port.PspPort;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
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
}
