package com.payments.api;

import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.rowCounts;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A webhook secret roll (docs/resolver.md, "Rotating the webhook secret"): with {@code payments.webhooks.secret} the
 * new secret and {@code payments.webhooks.previous-secret} the old one, a delivery signed with either is accepted and
 * one signed with neither is refused as before.
 */
@QuarkusTest
@TestProfile(WebhookSecretRotationTest.Rolling.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class WebhookSecretRotationTest {
    static final String CURRENT = "whsec_rotation_new";
    static final String PREVIOUS = "whsec_rotation_old";

    /** The middle of a roll: the new secret is current, the old one still accepted. */
    public static class Rolling implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payments.webhooks.secret", CURRENT, "payments.webhooks.previous-secret", PREVIOUS);
        }
    }

    @Inject
    Pool pool;

    @Test
    void deliverySignedWithTheCurrentSecretIsAccepted() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1200, "tok_visa");
        String event = PspWebhooks.sandbox(CURRENT)
                .chargeSucceeded(PspWebhooks.newEventId(), id, "ch_rot_current", 1200, "EUR");

        Response r = post(event, PspWebhooks.sign(CURRENT, now(), bytes(event)));

        r.then().statusCode(200);
        assertThat(r.<Boolean>path("duplicate")).isFalse();
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
    }

    @Test
    void deliverySignedWithThePreviousSecretIsAccepted() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1300, "tok_visa");
        String event = PspWebhooks.sandbox(CURRENT)
                .chargeSucceeded(PspWebhooks.newEventId(), id, "ch_rot_previous", 1300, "EUR");

        Response r = post(event, PspWebhooks.sign(PREVIOUS, now(), bytes(event)));

        r.then().statusCode(200);
        assertThat(r.<Boolean>path("duplicate")).isFalse();
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
    }

    @Test
    void deliverySignedWithNeitherSecretIsRefusedAndStoresNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1400, "tok_visa");
        String event = PspWebhooks.sandbox(CURRENT)
                .chargeSucceeded(PspWebhooks.newEventId(), id, "ch_rot_neither", 1400, "EUR");
        Map<String, Long> before = rowCounts(pool);

        for (String signature : new String[] {
            PspWebhooks.sign("whsec_sandbox_secret", now(), bytes(event)),
            PspWebhooks.sign(CURRENT + PREVIOUS, now(), bytes(event)),
            PspWebhooks.signWithEmptyKey(now(), bytes(event))
        }) {
            Response r = post(event, signature);
            r.then().statusCode(400).contentType("application/problem+json");
            assertThat(r.<String>path("code")).isEqualTo("invalid_webhook_signature");
        }

        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void stalenessStillAppliesToTheOldSecret() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1500, "tok_visa");
        String event =
                PspWebhooks.sandbox(CURRENT).chargeSucceeded(PspWebhooks.newEventId(), id, "ch_rot_stale", 1500, "EUR");

        Response r = post(event, PspWebhooks.sign(PREVIOUS, now() - 600, bytes(event)));

        r.then().statusCode(400);
        assertThat(r.<String>path("code")).isEqualTo("stale_webhook");
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    private static Response post(String event, String signature) {
        return given().contentType("application/json")
                .header(PspWebhooks.SANDBOX_HEADER, signature)
                .body(bytes(event))
                .post("/v1/psp/webhooks");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static long now() {
        return Instant.now().getEpochSecond();
    }
}
