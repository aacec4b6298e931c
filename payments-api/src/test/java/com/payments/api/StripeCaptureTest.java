package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.resolver.PaymentResolver;
import com.payments.psp.port.PspPort;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Capture and the resolver with {@code psp.provider=stripe}, against the sandbox's Stripe mode: the module's global
 * test resources start PostgreSQL and the sandbox ({@code psp.timeout-delay=8s}) on loopback, and the test profile
 * points {@code psp.stripe.api-base} at the sandbox's {@code /stripe}.
 */
@QuarkusTest
@TestProfile(StripeCaptureTest.Stripe.class)
class StripeCaptureTest {

    /** The Stripe adapter with a test key, as a deployment sets {@code PSP_PROVIDER} and {@code STRIPE_API_KEY}. */
    public static class Stripe implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("psp.provider", "stripe", "psp.stripe.api-key", "sk_test_payments_api");
        }
    }

    @Inject
    Pool pool;

    @Inject
    PaymentResolver resolver;

    @Inject
    PspPort psp;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    @AfterEach
    void noFaults() {
        TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
    }

    @Test
    void aCardThatSucceedsIsCapturedAsAPaymentIntent() {
        assertThat(psp.provider()).isEqualTo("stripe");
        Response captured = captureOnce("tok_visa", 201);

        assertThat(captured.<String>path("status")).isEqualTo("CAPTURED");
        assertThat(captured.<String>path("pspReference")).startsWith("pi_");
        assertThat(chargeMovements(captured)).isEqualTo(1);
    }

    @Test
    void aDeclinedCardIs402WithStripesDeclineCodeAndMovesNoMoney() {
        Response declined = captureOnce("tok_chargeDeclined", 402);

        assertThat(declined.<String>path("status")).isEqualTo("FAILED");
        assertThat(declined.<String>path("declineCode")).isEqualTo("generic_decline");
        assertThat(chargeMovements(declined)).isZero();
    }

    @Test
    void cardsThatNeedAuthenticationAreUnknownWithoutOpeningTheCircuit() {
        // 3-D Secure: Stripe answers requires_action. More of them than the test profile's circuit needs to open (3 of
        // 4): each is UNKNOWN for the resolver, none is a PSP failure, so the next capture still reaches Stripe.
        for (int i = 0; i < 5; i++) {
            Response pending = captureOnce("tok_authenticationRequired", 202);
            assertThat(pending.<String>path("status")).isEqualTo("UNKNOWN");
        }
        assertThat(captureOnce("tok_visa", 201).<String>path("status")).isEqualTo("CAPTURED");
    }

    @Test
    void aLostAnswerIsUnknownThenTheResolverResendsTheKeyAndStripeReplaysTheCharge() {
        // Stripe charges and keeps the answer under the key, but the answer comes after the capture's timeout
        Fixtures.faults(pspUrl, "{\"timeoutRate\":1.0}");
        String key = unique("key");
        String json = body(unique("order"), 1700, "EUR", "tok_visa");
        Response unknown = capture(KEY_A, key, json);
        unknown.then().statusCode(202);
        assertThat(unknown.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(unknown.path("id"));
        noFaults();

        Awaitility.await()
                .atMost(Duration.ofSeconds(40))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    resolver.runOnce().await().atMost(Duration.ofSeconds(30));
                    return paymentStatus(pool, id).equals("CAPTURED");
                });

        assertThat(chargeMovements(unknown))
                .as("the re-sent key charged nothing more")
                .isEqualTo(1);
        Response replay = capture(KEY_A, key, json);
        replay.then().statusCode(201).header("Idempotent-Replayed", "true");
        assertThat(replay.<String>path("pspReference")).startsWith("pi_");
    }

    /** A new capture of 15.00 EUR from {@code source}, answered {@code status}. */
    private static Response captureOnce(String source, int status) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), 1500, "EUR", source));
        response.then().statusCode(status);
        return response;
    }

    private int chargeMovements(Response payment) {
        return TestSupport.pspCounters(pspUrl, UUID.fromString(payment.path("id")))
                .path("chargeMovements");
    }
}
