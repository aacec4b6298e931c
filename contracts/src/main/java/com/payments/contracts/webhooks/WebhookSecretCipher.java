package com.payments.contracts.webhooks;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Merchants' webhook signing secrets at rest (issue 37, docs/deployment.md "Webhook secrets key"): AES-256-GCM under
 * a key of {@code webhook.secrets.keys} ({@code WEBHOOK_SECRETS_KEYS}, a Kubernetes Secret), {@code id:base64key}
 * pairs, comma-separated, the first one current. A row stores the key's id and {@code nonce || ciphertext || tag}; the
 * associated data binds the ciphertext to its row (endpoint id, row id) and key id, so a ciphertext copied to another
 * row, or altered, does not decrypt. payments-api seals (a new or rotated secret, the re-encryption job);
 * webhook-delivery opens (to sign). Without a key a service still starts (a benchmark or a PSP-only deployment needs
 * no merchant webhooks), and everything that needs one fails closed: nothing is sealed ({@link NotConfigured}: no
 * endpoint is created or rotated) and nothing is opened ({@link UnreadableSecret}: nothing is signed or sent).
 */
@Singleton
public final class WebhookSecretCipher {
    public static final String SETTING = "webhook.secrets.keys";

    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final String KEY_ID = "[A-Za-z0-9_-]{1,32}";

    /** A sealed secret as a row stores it. */
    public record Sealed(String keyId, byte[] ciphertext) {}

    /** A secret that cannot be opened: unknown key id, altered or moved ciphertext. Says nothing of the secret. */
    public static final class UnreadableSecret extends RuntimeException {
        UnreadableSecret(String message) {
            super(message);
        }
    }

    /** No key is configured: no secret can be sealed. */
    public static final class NotConfigured extends IllegalStateException {
        NotConfigured() {
            super(NOT_CONFIGURED);
        }
    }

    public static final String NOT_CONFIGURED = SETTING
            + " (WEBHOOK_SECRETS_KEYS) is not set: the AES-256 key that encrypts merchants' webhook signing"
            + " secrets, as id:base64 of 32 random bytes, the current key first"
            + " (docs/deployment.md, \"Webhook secrets key\")";

    private final String currentKeyId;
    private final Map<String, SecretKey> keys;

    @Inject
    WebhookSecretCipher(@ConfigProperty(name = SETTING) Optional<String> keys) {
        this(keys.filter(k -> !k.isBlank()).orElse(null));
    }

    private WebhookSecretCipher(String spec) {
        if (spec == null) {
            this.keys = Map.of();
            this.currentKeyId = null;
            return;
        }
        Map<String, SecretKey> parsed = new LinkedHashMap<>();
        for (String entry : spec.split(",")) {
            String trimmed = entry.strip();
            int colon = trimmed.indexOf(':');
            String id = colon < 0 ? "" : trimmed.substring(0, colon);
            if (!id.matches(KEY_ID)) {
                // never the entry itself: it holds a key
                throw new IllegalStateException(
                        SETTING + ": every entry is id:base64key with an id of 1-32 letters, digits, _ or -");
            }
            byte[] key;
            try {
                key = Base64.getDecoder().decode(trimmed.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(SETTING + ": the key of id " + id + " is not base64");
            }
            if (key.length != 32) {
                throw new IllegalStateException(SETTING + ": the key of id " + id + " is not 32 bytes (AES-256)");
            }
            if (parsed.put(id, new SecretKeySpec(key, "AES")) != null) {
                throw new IllegalStateException(SETTING + ": key id " + id + " is listed twice");
            }
        }
        this.keys = Map.copyOf(parsed);
        this.currentKeyId = parsed.keySet().iterator().next();
    }

    /** From a {@code webhook.secrets.keys} value (tests, tools). */
    public static WebhookSecretCipher of(String spec) {
        return new WebhookSecretCipher(spec);
    }

    /** Whether a key is configured; without one nothing can be sealed or opened. */
    public boolean configured() {
        return currentKeyId != null;
    }

    /** The key new secrets are sealed with; rows under another key are re-encrypted under it. */
    public String currentKeyId() {
        if (!configured()) {
            throw new NotConfigured();
        }
        return currentKeyId;
    }

    public Sealed seal(UUID endpointId, UUID secretId, String secret) {
        if (!configured()) {
            throw new NotConfigured();
        }
        byte[] nonce = new byte[NONCE_BYTES];
        new SecureRandom().nextBytes(nonce);
        try {
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, currentKeyId, nonce, endpointId, secretId);
            byte[] sealed = cipher.doFinal(secret.getBytes(StandardCharsets.UTF_8));
            return new Sealed(
                    currentKeyId,
                    ByteBuffer.allocate(NONCE_BYTES + sealed.length)
                            .put(nonce)
                            .put(sealed)
                            .array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    /** The secret of that row; {@link UnreadableSecret} when it cannot be, never a wrong value. */
    public String open(UUID endpointId, UUID secretId, String keyId, byte[] ciphertext) {
        if (!configured()) {
            throw new UnreadableSecret("no key is configured (" + SETTING + ")");
        }
        if (!keys.containsKey(keyId)) {
            throw new UnreadableSecret("sealed under key id " + keyId + ", which is not configured");
        }
        if (ciphertext == null || ciphertext.length < NONCE_BYTES + TAG_BITS / 8) {
            throw new UnreadableSecret("ciphertext too short");
        }
        try {
            Cipher cipher = cipher(
                    Cipher.DECRYPT_MODE, keyId, Arrays.copyOfRange(ciphertext, 0, NONCE_BYTES), endpointId, secretId);
            return new String(
                    cipher.doFinal(ciphertext, NONCE_BYTES, ciphertext.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (javax.crypto.AEADBadTagException e) {
            throw new UnreadableSecret("ciphertext altered, or not this row's");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    private Cipher cipher(int mode, String keyId, byte[] nonce, UUID endpointId, UUID secretId)
            throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, keys.get(keyId), new GCMParameterSpec(TAG_BITS, nonce));
        cipher.updateAAD(("webhook_endpoint_secrets:" + endpointId + ":" + secretId + ":" + keyId)
                .getBytes(StandardCharsets.UTF_8));
        return cipher;
    }
}
