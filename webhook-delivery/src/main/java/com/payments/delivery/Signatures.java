package com.payments.delivery;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Standard Webhooks signatures (docs/merchant-webhooks.md): {@code v1,<base64 HMAC-SHA256 of "id.timestamp.body">}, keyed with
 * the base64-decoded part of the secret after {@code whsec_}; one space-separated entry per unexpired secret, so a
 * receiver still holding the previous secret during a rotation's grace period verifies too.
 */
public final class Signatures {
    private static final String PREFIX = "whsec_";

    private Signatures() {}

    /** The {@code webhook-signature} header's value. */
    public static String header(List<String> secrets, String id, long timestamp, String body) {
        return secrets.stream().map(s -> sign(s, id, timestamp, body)).collect(Collectors.joining(" "));
    }

    static String sign(String secret, String id, long timestamp, String body) {
        if (!secret.startsWith(PREFIX)) {
            throw new IllegalArgumentException("a webhook secret starts with " + PREFIX);
        }
        byte[] key = Base64.getDecoder().decode(secret.substring(PREFIX.length()));
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] signed = mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
            return "v1," + Base64.getEncoder().encodeToString(signed);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
