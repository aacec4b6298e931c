package com.payments.api;

import static com.payments.api.TestSupport.merchant;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.TestSupport.Shop;
import com.payments.api.merchantwebhooks.WebhookSecretSealingJob;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * Merchants' webhook signing secrets at rest (issue 37): what payments-api writes to {@code webhook_endpoint_secrets},
 * read from the table directly as anyone with a database read (or a backup) would.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class WebhookSecretsAtRestTest {
    /** The test profile's keys: test-2 current, test-1 retired. */
    static final WebhookSecretCipher KEYS =
            WebhookSecretCipher.of(ConfigProvider.getConfig().getValue(WebhookSecretCipher.SETTING, String.class));

    @jakarta.inject.Inject
    Pool pool;

    @jakarta.inject.Inject
    WebhookSecretSealingJob job;

    @Test
    void createdAndRotatedSecretsAreStoredEncryptedUnderTheCurrentKeyOnly() {
        Shop shop = TestSupport.newShop("at-rest");
        Response created = merchant(shop.key())
                .contentType(ContentType.JSON)
                .body("{\"url\":\"http://127.0.0.1:21001/hook\",\"events\":[\"*\"]}")
                .post("/v1/webhook_endpoints");
        created.then().statusCode(201);
        UUID endpoint = UUID.fromString(created.path("id"));
        String first = created.path("secret");
        assertSealed(endpoint, List.of(first));

        Response rotated = merchant(shop.key()).post("/v1/webhook_endpoints/" + endpoint + "/rotate_secret");
        rotated.then().statusCode(200);
        assertSealed(endpoint, List.of(first, rotated.path("secret")));
    }

    /**
     * The sealing job, run by two replicas at once: a row in plaintext (as the release before V94 writes it) and one
     * sealed under the retired key test-1 end sealed under the current key, opening to the same secret; an altered
     * row is left exactly as it was (never re-sealed into something that signs), and counted.
     */
    @Test
    void plaintextAndRetiredKeyRowsAreResealedAndAnAlteredRowIsLeftAlone() {
        Shop shop = TestSupport.newShop("reseal");
        UUID endpoint = UUID.fromString(merchant(shop.key())
                .contentType(ContentType.JSON)
                .body("{\"url\":\"http://127.0.0.1:21001/hook\",\"events\":[\"*\"]}")
                .post("/v1/webhook_endpoints")
                .path("id"));
        WebhookSecretCipher retired = WebhookSecretCipher.of(ConfigProvider.getConfig()
                .getValue(WebhookSecretCipher.SETTING, String.class)
                .split(",")[1]);
        String plaintext = "whsec_"
                + Base64.getEncoder()
                        .encodeToString(UUID.randomUUID().toString().getBytes());
        exec(
                "INSERT INTO webhook_endpoint_secrets (endpoint_id, secret, expires_at)"
                        + " VALUES ($1, $2, now() + interval '1 hour')",
                Tuple.of(endpoint, plaintext));
        String old = "whsec_"
                + Base64.getEncoder()
                        .encodeToString(UUID.randomUUID().toString().getBytes());
        UUID oldRow = UUID.randomUUID();
        WebhookSecretCipher.Sealed oldSealed = retired.seal(endpoint, oldRow, old);
        insertSealed(oldRow, endpoint, oldSealed.keyId(), oldSealed.ciphertext(), "2 hours");
        UUID badRow = UUID.randomUUID();
        byte[] bad = retired.seal(endpoint, badRow, old).ciphertext();
        bad[bad.length - 1] ^= 1;
        insertSealed(badRow, endpoint, "test-1", bad, "3 hours");

        var runs = io.smallrye.mutiny.Uni.combine()
                .all()
                .unis(job.sealAll(), job.sealAll())
                .asTuple()
                .await()
                .atMost(Duration.ofSeconds(30));
        assertThat(runs.getItem1().unreadable() + runs.getItem2().unreadable()).isPositive();

        List<String> opened = new ArrayList<>();
        for (Row row : rows(endpoint)) {
            if (row.getUUID("id").equals(badRow)) {
                assertThat(row.getString("key_id")).isEqualTo("test-1");
                assertThat(row.getBuffer("ciphertext").getBytes()).isEqualTo(bad);
                continue;
            }
            assertThat(row.getString("secret")).isNull();
            assertThat(row.getString("key_id")).isEqualTo("test-2");
            opened.add(KEYS.open(
                    endpoint,
                    row.getUUID("id"),
                    "test-2",
                    row.getBuffer("ciphertext").getBytes()));
        }
        assertThat(opened).hasSize(3).contains(plaintext, old);
    }

    private void insertSealed(UUID id, UUID endpoint, String keyId, byte[] ciphertext, String expiresIn) {
        exec(
                "INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext, expires_at)"
                        + " VALUES ($1, $2, $3, $4, now() + $5::text::interval)",
                Tuple.of(id, endpoint, keyId, io.vertx.core.buffer.Buffer.buffer(ciphertext), expiresIn));
    }

    private void exec(String sql, Tuple args) {
        pool.preparedQuery(sql).execute(args).await().atMost(Duration.ofSeconds(10));
    }

    /** Every row of the endpoint: no plaintext, nothing of the secret in the bytes, and it opens to what was shown. */
    private void assertSealed(UUID endpoint, List<String> shown) {
        List<String> opened = new ArrayList<>();
        for (Row row : rows(endpoint)) {
            assertThat(row.getString("secret")).isNull();
            assertThat(row.getString("key_id")).isEqualTo("test-2");
            byte[] ciphertext = row.getBuffer("ciphertext").getBytes();
            String bytes = new String(ciphertext, StandardCharsets.ISO_8859_1);
            for (String secret : shown) {
                String key = secret.substring("whsec_".length());
                assertThat(bytes).doesNotContain(key.substring(0, 12));
                assertThat(new String(Base64.getDecoder().decode(key), StandardCharsets.ISO_8859_1))
                        .isNotIn(bytes);
            }
            opened.add(KEYS.open(endpoint, row.getUUID("id"), "test-2", ciphertext));
        }
        assertThat(opened).containsExactlyInAnyOrderElementsOf(shown);
    }

    private List<Row> rows(UUID endpoint) {
        List<Row> rows = new ArrayList<>();
        pool.preparedQuery("SELECT * FROM webhook_endpoint_secrets WHERE endpoint_id = $1")
                .execute(Tuple.of(endpoint))
                .await()
                .atMost(Duration.ofSeconds(10))
                .forEach(rows::add);
        return rows;
    }
}
