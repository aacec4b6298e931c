package com.payments.api.service;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * {@code Psp-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>} (design.md §5): the HMAC
 * over the exact bytes received, compared in constant time, and {@code t} within the tolerance of our clock.
 */
public final class WebhookSignature {
    public static final String HEADER = "Psp-Signature";

    public enum Verdict {
        VALID,
        INVALID,
        STALE
    }

    private WebhookSignature() {}

    public static Verdict verify(String header, byte[] body, String secret, Instant now, Duration tolerance) {
        if (header == null || header.length() > 1024) {
            return Verdict.INVALID;
        }
        String t = null;
        boolean matched = false;
        byte[] expected = null;
        for (String part : header.split(",")) {
            int eq = part.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String name = part.substring(0, eq).trim();
            String value = part.substring(eq + 1).trim();
            if (name.equals("t") && t == null && value.matches("[0-9]{1,12}")) {
                t = value;
                expected = hmac(secret, t, body);
            } else if (name.equals("v1") && expected != null && value.matches("[0-9a-fA-F]{64}")) {
                matched |= MessageDigest.isEqual(expected, HexFormat.of().parseHex(value));
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
