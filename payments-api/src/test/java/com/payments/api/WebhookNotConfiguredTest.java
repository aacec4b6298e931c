package com.payments.api;

import static com.payments.api.PspWebhooks.bytes;
import static com.payments.api.PspWebhooks.now;
import static com.payments.api.TestSupport.rowCounts;
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
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Without the current webhook secret every delivery is 503 {@code webhooks_not_configured} and nothing is stored,
 * even when the previous secret of a roll is still set and signs it (docs/resolver.md): the sandbox adapter would
 * verify with it, so the service refuses before asking it.
 */
@QuarkusTest
@TestProfile(WebhookNotConfiguredTest.PreviousOnly.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class WebhookNotConfiguredTest {
    static final String PREVIOUS = "whsec_left_over";

    public static class PreviousOnly implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "psp.provider", "sandbox",
                    "payments.webhooks.secret", "",
                    "payments.webhooks.previous-secret", PREVIOUS);
        }
    }

    @Inject
    Pool pool;

    @Test
    void withoutTheCurrentSecretEveryDeliveryIs503AndStoresNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1100, "tok_visa");
        PspWebhooks sandbox = PspWebhooks.sandbox(PREVIOUS);
        String event = sandbox.chargeSucceeded(PspWebhooks.newEventId(), id, "ch_nc", 1100, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response r = sandbox.post(event, PspWebhooks.sign(PREVIOUS, now(), bytes(event)));

        r.then().statusCode(503).contentType("application/problem+json").header("Retry-After", "60");
        assertThat(r.<String>path("code")).isEqualTo("webhooks_not_configured");
        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(TestSupport.paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }
}
