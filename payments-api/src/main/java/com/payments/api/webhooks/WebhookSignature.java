package com.payments.api.webhooks;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * {@code Psp-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>} (docs/architecture.md §5): the HMAC
 * over the exact bytes received, compared in constant time, and {@code t} within the tolerance of our clock. During a
 * secret roll a signature under any of the configured secrets is valid; a blank secret is never used as a key.
 */
public final class WebhookSignature {
    public static final String HEADER = "Psp-Signature";

    public enum Verdict {
        VALID,
        INVALID,
        STALE
    }

    private WebhookSignature() {}

    public static Verdict verify(String header, byte[] body, List<String> secrets, Instant now, Duration tolerance) {
        List<String> keys =
                secrets.stream().filter(s -> s != null && !s.isBlank()).toList();
        if (header == null || header.length() > 1024 || keys.isEmpty()) {
            return Verdict.INVALID;
        }
        String t = null;
        boolean matched = false;
        List<byte[]> expected = null;
        for (String part : header.split(",")) {
            int eq = part.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String name = part.substring(0, eq).trim();
            String value = part.substring(eq + 1).trim();
            if (name.equals("t") && t == null && value.matches("[0-9]{1,12}")) {
                t = value;
                String signed = t;
                expected = keys.stream().map(key -> hmac(key, signed, body)).toList();
            } else if (name.equals("v1") && expected != null && value.matches("[0-9a-fA-F]{64}")) {
                byte[] given = HexFormat.of().parseHex(value);
                for (byte[] candidate : expected) {
                    matched |= MessageDigest.isEqual(candidate, given); // every candidate, no early exit
                }
            }
        }
        if (!matched) {
            return Verdict.INVALID;
        }
        long age = Math.abs(now.getEpochSecond() - Long.parseLong(t));
        return age > tolerance.toSeconds() ? Verdict.STALE : Verdict.VALID;
    }

    /** The header value the PSP sends (also used by the tests). */
    public static String sign(String secret, long unixSeconds, byte[] body) {
        String t = Long.toString(unixSeconds);
        return "t=" + t + ",v1=" + HexFormat.of().formatHex(hmac(secret, t, body));
    }

    private static byte[] hmac(String secret, String t, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            return mac.doFinal(body);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException(e);
        }
    }
}
