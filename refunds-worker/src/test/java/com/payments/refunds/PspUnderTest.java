package com.payments.refunds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.restassured.path.json.JsonPath;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * What a test may assert differently per PSP protocol: the refund execution tests run with {@code
 * psp.provider=sandbox} (the sandbox protocol) and, in CI's phase "tests (psp.provider=stripe)", with {@code stripe}
 * against the sandbox's Stripe mode (same fault knobs, clock and counters). Only what one protocol has and the other
 * has not goes through here.
 */
final class PspUnderTest {
    private PspUnderTest() {}

    static boolean stripe() {
        return "stripe".equals(ConfigProvider.getConfig().getValue("psp.provider", String.class));
    }

    /** A card whose refunds fail: the protocol's {@code tok_refundFails}, Stripe's {@code tok_refundFail}. */
    static String refundFailsSource() {
        return stripe() ? "tok_refundFail" : "tok_refundFails";
    }

    /** The failure code of such a refund. */
    static String refundFailureCode() {
        return stripe() ? "expired_or_canceled_card" : "psp_refund_failed";
    }

    /**
     * A fault that leaves every refund call's outcome unknown and is gone once reset: the protocol's 500s; in Stripe
     * mode 429s, because Stripe keeps a 500 under the idempotency key (a re-send replays it for 24 h).
     */
    static String unavailableFault() {
        return stripe() ? "{\"rateLimitRate\": 1.0}" : "{\"errorRate\": 1.0}";
    }

    /**
     * The refund was sent to the PSP once. Stripe's look-ups inside the key window are the same POST with the same key
     * (so the request counter may be higher); there it must have made one refund object for our refund id.
     */
    static void assertSentOnce(Fixtures fx, String pspUrl, Fixtures.Captured payment, UUID refundId) {
        if (!stripe()) {
            assertThat(fx.pspRefundRequests(refundId)).as("PSP refund requests").isEqualTo(1);
            return;
        }
        assertThat(fx.pspRefundRequests(refundId)).as("PSP refund requests").isGreaterThanOrEqualTo(1);
        JsonPath refunds = given().baseUri(pspUrl + "/stripe")
                .header("Authorization", "Bearer sk_test_refunds")
                .get("/v1/refunds?limit=100&payment_intent=" + payment.charge())
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        List<String> ours = refunds.getList("data.findAll { it.metadata.refund_id == '" + refundId + "' }.id");
        assertThat(ours).as("Stripe refunds of our refund id").hasSize(1);
    }
}
