package com.payments.psp.stripe;

import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * Settings of the {@link StripePsp} adapter (docs/stripe.md, "Configuration"). {@link #toString()} never shows the API
 * key or the webhook secrets.
 *
 * @param apiBase {@code https://api.stripe.com}, or the sandbox's {@code http://localhost:8089/stripe}
 * @param apiKey the secret key ({@code STRIPE_API_KEY}), sent as a Bearer token
 * @param webhookSecrets the endpoint's signing secrets ({@code STRIPE_WEBHOOK_SECRET}); two while a secret rolls
 * @param apiVersion the pinned {@code Stripe-Version} sent with every call
 * @param callTimeout how long one HTTP call may take before its outcome is UNKNOWN
 * @param webhookTolerance how far a webhook's signed timestamp may be from our clock
 * @param rateLimitRetries how many times a 429 is retried (same key) before the outcome is UNKNOWN
 * @param rateLimitBackoff the first wait after a 429, doubled (with jitter) up to {@code callTimeout}
 * @param idempotencyWindow how long after the first attempt the resolver re-sends with the same key; inside Stripe's
 *     24 hours, with a margin for clock skew
 * @param searchLag how long Stripe's search may lag behind a write: an empty search for a charge first sent longer ago
 *     than this is NOT_FOUND, sooner it is UNKNOWN
 * @param maxConnections the HTTP connection pool; at least the concurrency limit's ceiling
 */
public record StripeSettings(
        URI apiBase,
        String apiKey,
        List<String> webhookSecrets,
        String apiVersion,
        Duration callTimeout,
        Duration webhookTolerance,
        int rateLimitRetries,
        Duration rateLimitBackoff,
        Duration idempotencyWindow,
        Duration searchLag,
        int maxConnections) {

    /** The API version this adapter is written and tested against. */
    public static final String PINNED_API_VERSION = "2025-03-31.basil";

    public StripeSettings {
        if (apiKey == null || apiKey.isBlank()) {
            throw new IllegalArgumentException("The Stripe API key (STRIPE_API_KEY) is not set");
        }
        webhookSecrets = List.copyOf(webhookSecrets);
    }

    /** The defaults of docs/stripe.md with the given base URL, key and secrets. */
    public static StripeSettings defaults(URI apiBase, String apiKey, List<String> webhookSecrets) {
        return new StripeSettings(
                apiBase,
                apiKey,
                webhookSecrets,
                PINNED_API_VERSION,
                Duration.ofSeconds(10),
                Duration.ofMinutes(5),
                3,
                Duration.ofMillis(500),
                Duration.ofHours(23),
                Duration.ofHours(1),
                2048);
    }

    @Override
    public String toString() {
        return "StripeSettings[apiBase=" + apiBase + ", apiKey=<redacted>, webhookSecrets=<" + webhookSecrets.size()
                + " redacted>, apiVersion=" + apiVersion + ", callTimeout=" + callTimeout + ", webhookTolerance="
                + webhookTolerance + ", rateLimitRetries=" + rateLimitRetries + ", rateLimitBackoff="
                + rateLimitBackoff + ", idempotencyWindow=" + idempotencyWindow + ", searchLag=" + searchLag
                + ", maxConnections=" + maxConnections + "]";
    }
}
