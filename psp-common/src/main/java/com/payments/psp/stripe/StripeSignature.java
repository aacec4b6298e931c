package com.payments.psp.stripe;

import com.payments.psp.port.WebhookRejectedException;
import com.payments.psp.port.WebhookRejectedException.Reason;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks Stripe's {@code Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]}: a {@code v1} must equal
 * HMAC-SHA256(secret, t + "." + raw body) for one of our secrets (two while we roll ours; Stripe sends one {@code v1}
 * per secret while it rolls), compared in constant time, and {@code t} must be within the tolerance of our clock.
 * Other schemes ({@code v0}) are ignored. The sandbox protocol's {@code Psp-Signature} uses the same scheme
 * (docs/architecture.md §5), so its adapter checks with this class too.
 */
public final class StripeSignature {

    /** Longer headers are refused unread (Stripe's carry one {@code v1} per secret it rolls: a few hundred bytes). */
    private static final int MAX_HEADER = 2048;

    private final List<SecretKeySpec> secrets;
    private final Duration tolerance;
    private final Clock clock;

    public StripeSignature(List<String> secrets, Duration tolerance, Clock clock) {
        this.secrets = secrets.stream()
                .filter(s -> s != null && !s.isBlank())
                .map(s -> new SecretKeySpec(s.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
                .toList();
        this.tolerance = tolerance;
        this.clock = clock;
    }

    /**
     * Checks the signature first and the timestamp after it, so a forged header is always {@code SIGNATURE} and only
     * a genuine but old (replayed) one is {@code STALE}.
     *
     * @throws WebhookRejectedException when no secret is set, or the header is missing, wrong or too old
     */
    public void verify(String header, byte[] body) {
        if (secrets.isEmpty()) {
            throw rejected(Reason.SIGNATURE, "no webhook secret is configured");
        }
        if (header == null || header.isBlank() || header.length() > MAX_HEADER) {
            throw rejected(Reason.SIGNATURE, "missing Stripe-Signature header");
        }
        Long timestamp = null;
        List<byte[]> signatures = new ArrayList<>();
        for (String part : header.split(",")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                continue;
            }
            String name = part.substring(0, eq).trim();
            String value = part.substring(eq + 1).trim();
            if (name.equals("t")) {
                if (timestamp != null || !value.matches("[0-9]{1,12}")) {
                    throw rejected(Reason.SIGNATURE, "unreadable timestamp in Stripe-Signature");
                }
                timestamp = Long.parseLong(value);
            } else if (name.equals("v1") && value.length() == 64) {
                try {
                    signatures.add(HexFormat.of().parseHex(value));
                } catch (IllegalArgumentException e) {
                    // not hex: not a signature of ours, ignore it like an unknown scheme
                }
            }
        }
        if (timestamp == null) {
            throw rejected(Reason.SIGNATURE, "no timestamp in Stripe-Signature");
        }
        if (signatures.isEmpty()) {
            throw rejected(Reason.SIGNATURE, "no v1 signature in Stripe-Signature");
        }
        byte[] prefix = (timestamp + ".").getBytes(StandardCharsets.US_ASCII);
        boolean matched = false;
        for (SecretKeySpec secret : secrets) {
            byte[] expected = hmac(secret, prefix, body);
            for (byte[] signature : signatures) {
                matched |= MessageDigest.isEqual(expected, signature); // every candidate, no early exit
            }
        }
        if (!matched) {
            throw rejected(Reason.SIGNATURE, "no Stripe-Signature v1 matches");
        }
        long now = clock.instant().getEpochSecond();
        if (Math.abs(now - timestamp) > tolerance.toSeconds()) {
            throw rejected(Reason.STALE, "Stripe-Signature timestamp outside the tolerance");
        }
    }

    private static WebhookRejectedException rejected(Reason reason, String message) {
        return new WebhookRejectedException(reason, message);
    }

    private static byte[] hmac(SecretKeySpec secret, byte[] prefix, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(secret);
            mac.update(prefix);
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
