package com.payments.api.common;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 over method, path and canonical body: what "the same request" means for an idempotency key. */
public final class RequestHash {
    private RequestHash() {}

    public static byte[] of(String method, String path, JsonNode body) {
        MessageDigest digest = sha256();
        digest.update(method.getBytes(StandardCharsets.US_ASCII));
        digest.update((byte) '\n');
        digest.update(path.getBytes(StandardCharsets.UTF_8));
        digest.update((byte) '\n');
        digest.update(JsonBodies.canonical(body));
        return digest.digest();
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
