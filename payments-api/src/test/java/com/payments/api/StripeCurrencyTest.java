package com.payments.api;

import static com.payments.api.PspWebhooks.newEventId;
import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.merchant;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Stripe's amount units (issue 37, item 2): our API takes ISO 4217 minor units, Stripe wants its own (ISK in
 * hundredths although it has no minor unit, MGA without its ISO minor unit, three-decimal currencies ending in 0). The
 * sandbox's Stripe mode applies Stripe's rules and keeps what it received, so a wrong conversion shows here.
 */
@QuarkusTest
@TestProfile(StripeWebhookTest.Stripe.class)
class StripeCurrencyTest {

    @Inject
    Pool pool;

    @Inject
    PspPort psp;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    final PspWebhooks webhooks = PspWebhooks.active();

    @Test
    void anIskCaptureReachesStripeInHundredthsAndReadsInKronur() {
        Response captured = captureOnce(5000, "ISK", 201);

        assertThat(captured.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(captured.<Integer>path("amount")).isEqualTo(5000);
        assertThat(intent(captured).<Integer>path("amount"))
                .as("5,000 ISK at Stripe")
                .isEqualTo(500_000);
        assertThat(intent(captured).<String>path("currency")).isEqualTo("isk");
        assertThat(read(captured).<Integer>path("amount")).isEqualTo(5000);
    }

    @Test
    void anMgaCaptureReachesStripeWithoutIsoMinorUnits() {
        // 5,000.00 MGA in ISO minor units; Stripe's MGA is zero-decimal
        Response captured = captureOnce(500_000, "MGA", 201);

        assertThat(intent(captured).<Integer>path("amount")).isEqualTo(5000);
        assertThat(read(captured).<Integer>path("amount")).isEqualTo(500_000);
    }

    @Test
    void aJpyCaptureIsUnchanged() {
        Response captured = captureOnce(5000, "JPY", 201);

        assertThat(intent(captured).<Integer>path("amount")).isEqualTo(5000);
        assertThat(read(captured).<Integer>path("amount")).isEqualTo(5000);
    }

    @Test
    void aThreeDecimalAmountStripeCannotTakeIsRefused422WithNothingStored() {
        Map<String, Long> before = TestSupport.rowCounts(pool);
        String key = unique("key");
        String orderId = unique("order");

        Response refused = capture(KEY_A, key, body(orderId, 1235, "KWD", "tok_visa"));

        refused.then().statusCode(422).contentType("application/problem+json");
        assertThat(refused.<String>path("code")).isEqualTo("amount_not_supported_by_psp");
        assertThat(TestSupport.rowCounts(pool)).as("nothing stored").isEqualTo(before);
        // the key was not taken: the same key with an amount Stripe takes is a new request
        Response accepted = capture(KEY_A, key, body(orderId, 1230, "KWD", "tok_visa"));
        accepted.then().statusCode(201);
        assertThat(intent(accepted).<Integer>path("amount")).isEqualTo(1230);
    }

    @Test
    void aCurrencyStripeDoesNotOfferIsRefused422WithNothingStored() {
        Map<String, Long> before = TestSupport.rowCounts(pool);

        // the Iranian rial is an ISO 4217 currency the API knows, but not one of Stripe's presentment currencies
        Response refused = capture(KEY_A, unique("key"), body(unique("order"), 100_000, "IRR", "tok_visa"));

        refused.then().statusCode(422);
        assertThat(refused.<String>path("code")).isEqualTo("currency_not_supported_by_psp");
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void aRefundOfAThreeDecimalAmountStripeCannotTakeIsRefused422WithNothingReserved() {
        Response captured = captureOnce(5000, "KWD", 201);
        UUID id = UUID.fromString(captured.path("id"));
        Map<String, Long> before = TestSupport.rowCounts(pool);

        Response refused = refund(id, 1235);

        refused.then().statusCode(422);
        assertThat(refused.<String>path("code")).isEqualTo("amount_not_supported_by_psp");
        assertThat(TestSupport.rowCounts(pool)).isEqualTo(before);
        assertThat(read(captured).<Integer>path("refundableAmount")).isEqualTo(5000);
        refund(id, 1230).then().statusCode(202);
        assertThat(read(captured).<Integer>path("refundableAmount")).isEqualTo(3770);
    }

    @Test
    void aRefundOfAnIskPaymentReachesStripeInHundredths() {
        Response captured = captureOnce(5000, "ISK", 201);
        UUID paymentId = UUID.fromString(captured.path("id"));
        String refundId = UUID.randomUUID().toString();

        RefundResult refunded = psp.refund(
                        new RefundRequest(refundId, paymentId.toString(), captured.path("pspReference"), 2000, "ISK"))
                .await()
                .atMost(Duration.ofSeconds(30));

        assertThat(refunded.status()).isEqualTo(RefundResult.Status.SUCCEEDED);
        Response atStripe = stripe().get("/stripe/v1/refunds/" + refunded.pspRefundId());
        atStripe.then().statusCode(200);
        assertThat(atStripe.<Integer>path("amount")).as("2,000 ISK at Stripe").isEqualTo(200_000);
    }

    @Test
    void aStripeEventOfAnIskPaymentIsReadInKronur() {
        UUID id = UUID.randomUUID();
        pool.preparedQuery(
                        """
                        INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, status, next_attempt_at)
                        VALUES ($1, $2, $3, 5000, 'ISK', 'tok_visa', 'UNKNOWN', now() + interval '1 hour')""")
                .execute(Tuple.of(id, Fixtures.MERCHANT_A, "order-" + id))
                .await()
                .indefinitely();
        String intent = "pi_" + id.toString().replace("-", "").substring(0, 20);

        // Stripe's event says 500000 (hundredths of a krona): 5,000 ISK, our amount
        webhooks.deliver(webhooks.chargeSucceeded(newEventId(), id, intent, 500_000, "ISK"))
                .then()
                .statusCode(200);

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(TestSupport.count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'psp_amount_mismatch'",
                        id.toString()))
                .isZero();
    }

    private Response captureOnce(long amount, String currency, int status) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), amount, currency, "tok_visa"));
        response.then().statusCode(status);
        return response;
    }

    private Response refund(UUID paymentId, long amount) {
        return merchant(KEY_A)
                .header("Idempotency-Key", unique("refund-key"))
                .contentType("application/json")
                .body("{\"amount\":" + amount + "}")
                .post("/v1/payments/" + paymentId + "/refunds");
    }

    private Response read(Response captured) {
        Response payment = merchant(KEY_A).get("/v1/payments/" + captured.<String>path("id"));
        payment.then().statusCode(200);
        return payment;
    }

    /** The PaymentIntent as the sandbox's Stripe mode holds it. */
    private Response intent(Response captured) {
        Response intent = stripe().get("/stripe/v1/payment_intents/" + captured.<String>path("pspReference"));
        intent.then().statusCode(200);
        return intent;
    }

    private io.restassured.specification.RequestSpecification stripe() {
        return TestSupport.psp(pspUrl).header("Authorization", "Bearer sk_test_webhooks");
    }
}
