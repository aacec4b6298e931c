package com.payments.api;

import static io.restassured.RestAssured.given;

import io.restassured.response.Response;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Webhook events as the configured PSP ({@code psp.provider}) shapes and signs them, posted to its route: the sandbox
 * protocol's ({@code Psp-Signature}, docs/architecture.md §5) or Stripe's ({@code Stripe-Signature}, Stripe's
 * {@code event} objects as psp-sandbox's Stripe mode sends them). The same test then runs under either provider.
 */
public final class PspWebhooks {
    public static final String SANDBOX_HEADER = "Psp-Signature";
    static final String STRIPE_HEADER = "Stripe-Signature";

    final String provider;
    /** The secret deliveries are signed with: the first configured one. */
    final String secret;

    private PspWebhooks(String provider, String secret) {
        this.provider = provider;
        this.secret = secret;
    }

    /** For the running application's provider and secret. */
    static PspWebhooks active() {
        var config = ConfigProvider.getConfig();
        String provider = config.getValue("psp.provider", String.class);
        String secret = stripe(provider)
                ? config.getValues("psp.stripe.webhook-secrets", String.class).get(0)
                : config.getValue("payments.webhooks.secret", String.class);
        return new PspWebhooks(provider, secret);
    }

    /** The sandbox protocol's events, whatever the running application's provider. */
    static PspWebhooks sandbox(String secret) {
        return new PspWebhooks("sandbox", secret);
    }

    static boolean stripe(String provider) {
        return provider.equals("stripe");
    }

    boolean stripe() {
        return stripe(provider);
    }

    String path() {
        return stripe() ? "/v1/psp/stripe/webhooks" : "/v1/psp/webhooks";
    }

    /** The route of the provider that is not configured. */
    String otherPath() {
        return stripe() ? "/v1/psp/webhooks" : "/v1/psp/stripe/webhooks";
    }

    String header() {
        return stripe() ? STRIPE_HEADER : SANDBOX_HEADER;
    }

    static String newEventId() {
        return "evt_" + UUID.randomUUID().toString().replace("-", "");
    }

    // ------------------------------------------------------------------ events

    String chargeSucceeded(String eventId, UUID paymentId, String chargeId, long amount, String currency) {
        return charge(eventId, true, paymentId, chargeId, amount, currency, null);
    }

    String chargeFailed(
            String eventId, UUID paymentId, String chargeId, long amount, String currency, String declineCode) {
        return charge(eventId, false, paymentId, chargeId, amount, currency, declineCode);
    }

    private String charge(
            String eventId,
            boolean succeeded,
            UUID paymentId,
            String chargeId,
            long amount,
            String currency,
            String declineCode) {
        if (!stripe()) {
            return "{\"id\":\"" + eventId + "\",\"type\":\"charge." + (succeeded ? "succeeded" : "failed")
                    + "\",\"data\":{\"id\":\"" + chargeId + "\",\"reference\":\"" + paymentId + "\",\"status\":\""
                    + (succeeded ? "succeeded" : "declined") + "\""
                    + (declineCode == null ? "" : ",\"declineCode\":\"" + declineCode + "\"") + ",\"amount\":" + amount
                    + ",\"currency\":\"" + currency
                    + "\",\"created\":\"2026-01-01T00:00:00.000Z\"}}";
        }
        String error = succeeded
                ? "null"
                : "{\"type\":\"card_error\",\"code\":\"card_declined\",\"decline_code\":\""
                        + (declineCode == null ? "generic_decline" : declineCode) + "\"}";
        String intent = "{\"id\":\"" + chargeId + "\",\"object\":\"payment_intent\",\"amount\":" + amount
                + ",\"amount_received\":" + (succeeded ? amount : 0) + ",\"capture_method\":\"automatic\""
                + ",\"currency\":\"" + currency.toLowerCase() + "\",\"last_payment_error\":" + error
                + ",\"latest_charge\":\"ch_" + chargeId + "\",\"livemode\":false,\"metadata\":{\"payment_id\":\""
                + paymentId + "\"},\"status\":\"" + (succeeded ? "succeeded" : "requires_payment_method") + "\"}";
        return stripeEvent(eventId, succeeded ? "payment_intent.succeeded" : "payment_intent.payment_failed", intent);
    }

    /**
     * A refund's event: {@code status} succeeded, failed or pending. Sandbox: {@code refund.succeeded} /
     * {@code refund.failed} (it has no pending event: null); Stripe: {@code refund.updated} with the status, or
     * {@code refund.failed} when {@code failedEvent}.
     */
    String refund(
            String eventId,
            String status,
            boolean failedEvent,
            UUID refundId,
            UUID paymentId,
            String pspRefundId,
            String chargeId,
            long amount,
            String currency) {
        if (!stripe()) {
            if (status.equals("pending")) {
                return null;
            }
            return "{\"id\":\"" + eventId + "\",\"type\":\"refund." + status + "\",\"data\":{\"id\":\"" + pspRefundId
                    + "\",\"reference\":\"" + refundId + "\",\"status\":\"" + status + "\",\"charge\":\"" + chargeId
                    + "\",\"amount\":" + amount + (status.equals("failed") ? ",\"failureCode\":\"card_closed\"" : "")
                    + "}}";
        }
        String refund = "{\"id\":\"" + pspRefundId + "\",\"object\":\"refund\",\"amount\":" + amount
                + ",\"currency\":\"" + currency.toLowerCase() + "\",\"charge\":\"ch_" + chargeId + "\""
                + (status.equals("failed") ? ",\"failure_reason\":\"expired_or_canceled_card\"" : "")
                + ",\"metadata\":{\"refund_id\":\"" + refundId + "\",\"payment_id\":\"" + paymentId
                + "\"},\"payment_intent\":\"" + chargeId + "\",\"status\":\"" + status + "\"}";
        return stripeEvent(eventId, failedEvent ? "refund.failed" : "refund.updated", refund);
    }

    /** Stripe's {@code charge.dispute.created} for a PaymentIntent (Stripe only: the sandbox protocol has none). */
    String dispute(String eventId, String disputeId, String paymentIntent, long amount, String currency) {
        return dispute(eventId, disputeId, paymentIntent, amount, currency, Instant.now());
    }

    /** A dispute whose event was created at {@code created} (delivered now: the signature's time is the delivery's). */
    String dispute(
            String eventId, String disputeId, String paymentIntent, long amount, String currency, Instant created) {
        String dispute = "{\"id\":\"" + disputeId + "\",\"object\":\"dispute\",\"amount\":" + amount
                + ",\"charge\":\"ch_" + paymentIntent + "\",\"currency\":\"" + currency.toLowerCase()
                + "\",\"is_charge_refundable\":false,\"livemode\":false,\"metadata\":{},\"payment_intent\":\""
                + paymentIntent + "\",\"reason\":\"fraudulent\",\"status\":\"needs_response\"}";
        return stripeEvent(eventId, "charge.dispute.created", dispute, created);
    }

    private static String stripeEvent(String eventId, String type, String object) {
        return stripeEvent(eventId, type, object, Instant.now());
    }

    private static String stripeEvent(String eventId, String type, String object, Instant created) {
        return "{\"id\":\"" + eventId + "\",\"object\":\"event\",\"api_version\":\"2025-03-31.basil\",\"created\":"
                + created.getEpochSecond() + ",\"data\":{\"object\":" + object
                + "},\"livemode\":false,\"pending_webhooks\":1,\"request\":{\"id\":null,\"idempotency_key\":null}"
                + ",\"type\":\"" + type + "\"}";
    }

    // ------------------------------------------------------------------ signing and delivery

    /** {@code t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>}: the scheme of both headers. */
    public static String sign(String secret, long t, byte[] body) {
        return "t=" + t + ",v1=" + HexFormat.of().formatHex(hmac(secret.getBytes(StandardCharsets.UTF_8), t, body));
    }

    /** One {@code v1} per secret, as Stripe signs while it rolls a secret. */
    static String signWithEach(long t, byte[] body, String... secrets) {
        StringBuilder header = new StringBuilder("t=").append(t);
        for (String s : secrets) {
            header.append(",v1=").append(HexFormat.of().formatHex(hmac(s.getBytes(StandardCharsets.UTF_8), t, body)));
        }
        return header.toString();
    }

    /**
     * A signature under the empty key, as a receiver would accept it if it verified with an unset secret. HMAC pads
     * its key with zero bytes, so one zero byte is the same key as none (SecretKeySpec refuses an empty one).
     */
    static String signWithEmptyKey(long t, byte[] body) {
        return "t=" + t + ",v1=" + HexFormat.of().formatHex(hmac(new byte[1], t, body));
    }

    private static byte[] hmac(byte[] key, long t, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    String signature(String event, long t) {
        return sign(secret, t, bytes(event));
    }

    /** Signed now with the configured secret and posted to the provider's route. */
    Response deliver(String event) {
        return deliver(event, now());
    }

    Response deliver(String event, long t) {
        return post(event, signature(event, t));
    }

    Response post(String event, String signature) {
        return post(path(), event, signature);
    }

    Response post(String path, String event, String signature) {
        var request = given().contentType("application/json").body(bytes(event));
        if (signature != null) {
            request = request.header(header(), signature);
        }
        return request.post(path);
    }

    static long now() {
        return Instant.now().getEpochSecond();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
