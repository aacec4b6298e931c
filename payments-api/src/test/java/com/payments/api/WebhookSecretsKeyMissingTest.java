package com.payments.api;

import static com.payments.api.TestSupport.merchant;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import com.payments.api.TestSupport.Shop;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.vertx.mutiny.sqlclient.Pool;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Without {@code WEBHOOK_SECRETS_KEYS} payments-api still starts (a deployment or a benchmark harness without
 * merchant webhooks sets none), and what needs the key fails closed: no endpoint is created, no secret is stored.
 */
@QuarkusTest
@TestProfile(WebhookSecretsKeyMissingTest.NoKey.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class WebhookSecretsKeyMissingTest {
    public static class NoKey implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("webhook.secrets.keys", "");
        }
    }

    @jakarta.inject.Inject
    Pool pool;

    @Test
    void capturesWorkAndCreatingAWebhookEndpointIsRefusedWithNothingStored() {
        Shop shop = TestSupport.newShop("no-key");
        TestSupport.capture(
                        shop.key(), UUID.randomUUID().toString(), TestSupport.body("no-key-1", 1000, "EUR", "tok_visa"))
                .then()
                .statusCode(201);
        long endpointsBefore = TestSupport.count(pool, "SELECT count(*) FROM webhook_endpoints");
        long secretsBefore = TestSupport.count(pool, "SELECT count(*) FROM webhook_endpoint_secrets");

        merchant(shop.key())
                .contentType(ContentType.JSON)
                .body("{\"url\":\"http://127.0.0.1:21001/hook\",\"events\":[\"*\"]}")
                .post("/v1/webhook_endpoints")
                .then()
                .statusCode(503)
                .contentType("application/problem+json")
                .body("code", equalTo("webhook_secrets_not_configured"));

        assertThat(TestSupport.count(pool, "SELECT count(*) FROM webhook_endpoints"))
                .isEqualTo(endpointsBefore);
        assertThat(TestSupport.count(pool, "SELECT count(*) FROM webhook_endpoint_secrets"))
                .isEqualTo(secretsBefore);
    }
}
