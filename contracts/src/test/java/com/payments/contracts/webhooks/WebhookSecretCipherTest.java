package com.payments.contracts.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.contracts.webhooks.WebhookSecretCipher.Sealed;
import com.payments.contracts.webhooks.WebhookSecretCipher.UnreadableSecret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** AES-256-GCM of webhook signing secrets (issue 37): round trip, key rotation, and every tampering fails closed. */
class WebhookSecretCipherTest {
    static final String K1 = "k1:" + Base64.getEncoder().encodeToString(new byte[32]);
    static final String K2 = "k2:hKD7axaK/7kqV566y+hfw40AqChE4ya73yS9BZcSJNc=";
    static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3LFmmHgT7vQ=";

    final UUID endpoint = UUID.randomUUID();
    final UUID row = UUID.randomUUID();

    @Test
    void sealsUnderTheFirstKeyWithAFreshNonceAndOpensAgain() {
        WebhookSecretCipher cipher = WebhookSecretCipher.of(K1 + "," + K2);
        Sealed a = cipher.seal(endpoint, row, SECRET);
        Sealed b = cipher.seal(endpoint, row, SECRET);
        assertThat(a.keyId()).isEqualTo("k1").isEqualTo(cipher.currentKeyId());
        assertThat(a.ciphertext()).isNotEqualTo(b.ciphertext()).hasSize(12 + SECRET.length() + 16);
        assertThat(new String(a.ciphertext(), StandardCharsets.ISO_8859_1)).doesNotContain(SECRET.substring(6, 20));
        assertThat(cipher.open(endpoint, row, a.keyId(), a.ciphertext())).isEqualTo(SECRET);
    }

    @Test
    void aRotatedKeyListStillOpensTheOldKeysRowsAndSealsUnderTheNewOne() {
        Sealed old = WebhookSecretCipher.of(K1).seal(endpoint, row, SECRET);
        WebhookSecretCipher rotated = WebhookSecretCipher.of(K2 + ", " + K1);
        assertThat(rotated.open(endpoint, row, old.keyId(), old.ciphertext())).isEqualTo(SECRET);
        assertThat(rotated.seal(endpoint, row, SECRET).keyId()).isEqualTo("k2");
        // once the old key is removed, its rows cannot be opened: fail closed, never a wrong secret
        assertThatThrownBy(() -> WebhookSecretCipher.of(K2).open(endpoint, row, old.keyId(), old.ciphertext()))
                .isInstanceOf(UnreadableSecret.class)
                .hasMessageContaining("k1");
    }

    @Test
    void anAlteredOrMovedCiphertextDoesNotOpen() {
        WebhookSecretCipher cipher = WebhookSecretCipher.of(K1 + "," + K2);
        Sealed sealed = cipher.seal(endpoint, row, SECRET);
        for (int i = 0; i < sealed.ciphertext().length; i += 7) {
            byte[] altered = sealed.ciphertext().clone();
            altered[i] ^= 1;
            assertThatThrownBy(() -> cipher.open(endpoint, row, "k1", altered)).isInstanceOf(UnreadableSecret.class);
        }
        assertThatThrownBy(() -> cipher.open(UUID.randomUUID(), row, "k1", sealed.ciphertext()))
                .isInstanceOf(UnreadableSecret.class);
        assertThatThrownBy(() -> cipher.open(endpoint, UUID.randomUUID(), "k1", sealed.ciphertext()))
                .isInstanceOf(UnreadableSecret.class);
        // the same bytes under the other key's id
        assertThatThrownBy(() -> cipher.open(endpoint, row, "k2", sealed.ciphertext()))
                .isInstanceOf(UnreadableSecret.class);
        assertThatThrownBy(() -> cipher.open(endpoint, row, "k1", new byte[10])).isInstanceOf(UnreadableSecret.class);
    }

    @Test
    void withoutAKeyNothingIsSealedOrOpened() {
        byte[] sealedElsewhere =
                WebhookSecretCipher.of(K1).seal(endpoint, row, "whsec_x").ciphertext();
        for (WebhookSecretCipher none :
                List.of(new WebhookSecretCipher(Optional.empty()), new WebhookSecretCipher(Optional.of(" ")))) {
            assertThat(none.configured()).isFalse();
            assertThatThrownBy(() -> none.seal(endpoint, row, "whsec_x"))
                    .isInstanceOf(WebhookSecretCipher.NotConfigured.class)
                    .hasMessageContaining("(WEBHOOK_SECRETS_KEYS) is not set")
                    .hasMessageContaining("docs/deployment.md");
            assertThatThrownBy(none::currentKeyId).isInstanceOf(WebhookSecretCipher.NotConfigured.class);
            assertThatThrownBy(() -> none.open(endpoint, row, "k1", sealedElsewhere))
                    .isInstanceOf(UnreadableSecret.class);
        }
        assertThat(WebhookSecretCipher.of(K1).configured()).isTrue();
    }

    @Test
    void refusesAMalformedKeyListWithoutShowingAKey() {
        String shortKey = Base64.getEncoder().encodeToString(new byte[16]);
        assertThatThrownBy(() -> WebhookSecretCipher.of("k:" + shortKey))
                .hasMessageContaining("not 32 bytes")
                .hasMessageNotContaining(shortKey);
        assertThatThrownBy(() -> WebhookSecretCipher.of("k:not base64!")).hasMessageContaining("not base64");
        assertThatThrownBy(() -> WebhookSecretCipher.of(K1 + "," + K1)).hasMessageContaining("twice");
        assertThatThrownBy(() -> WebhookSecretCipher.of("hKD7axaK/7kqV566y+hfw40AqChE4ya73yS9BZcSJNc="))
                .hasMessageContaining("id:base64key")
                .hasMessageNotContaining("hKD7");
    }
}
