package com.payments.psp.config;

import com.payments.psp.stripe.StripeSettings;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Which PSP a service calls and how (docs/stripe.md, "Configuration"): {@code psp.*} of payments-api and
 * refunds-worker. A service indexes psp-common ({@code quarkus.index-dependency.psp-common.*}) to get this mapping and
 * {@link PspPortProducer}.
 */
@ConfigMapping(prefix = "psp")
public interface PspConfig {

    /** {@code sandbox} (the protocol of docs/architecture.md §5) or {@code stripe}; env {@code PSP_PROVIDER}. */
    @WithDefault("sandbox")
    String provider();

    /** Base URL of the sandbox protocol (env {@code PSP_URL}). */
    @WithDefault("http://localhost:8089")
    URI url();

    /** The sandbox adapter. */
    Sandbox sandbox();

    /** The Stripe adapter. */
    Stripe stripe();

    interface Sandbox {
        /** Overrides {@code psp.url} for the adapter only (tests that put their own PSP in front). */
        Optional<URI> url();

        /** A connection not made within this was never sent (the capture drops the payment and releases the key). */
        @WithDefault("1s")
        Duration connectTimeout();

        /** Bounds one HTTP call below the services' fault-tolerance timeouts, which decide. */
        @WithDefault("10s")
        Duration callTimeout();

        /** HTTP/1.1 keep-alive connections: at least the ceiling of the service's PSP limit. */
        @WithDefault("2048")
        int maxConnections();

        /**
         * The {@code Psp-Signature} secrets webhooks are verified with (the current one, and the previous one while it
         * rolls); blank entries are no key. payments-api sets it from {@code payments.webhooks.secret} and
         * {@code previous-secret}.
         */
        Optional<List<String>> webhookSecrets();

        /** How far a webhook's signed timestamp may be from our clock. */
        @WithDefault("5m")
        Duration webhookTolerance();
    }

    interface Stripe {
        /** Stripe's API; locally the sandbox's Stripe mode ({@code http://localhost:8089/stripe}). */
        @WithDefault("https://api.stripe.com")
        URI apiBase();

        /** The secret key ({@code STRIPE_API_KEY}); required with {@code psp.provider=stripe}. Never logged. */
        Optional<String> apiKey();

        /** The webhook endpoint's signing secrets ({@code STRIPE_WEBHOOK_SECRET}, comma-separated while rolling). */
        Optional<List<String>> webhookSecrets();

        /** The pinned {@code Stripe-Version}. */
        @WithDefault(StripeSettings.PINNED_API_VERSION)
        String apiVersion();

        /** Per attempt; the outcome is UNKNOWN after it. */
        @WithDefault("10s")
        Duration callTimeout();

        /** How far a webhook's signed timestamp may be from our clock. */
        @WithDefault("5m")
        Duration webhookTolerance();

        /** How many times a 429 is retried with the same key before the outcome is UNKNOWN. */
        @WithDefault("3")
        int rateLimitRetries();

        /** The first wait after a 429, doubled with jitter up to {@code call-timeout}. */
        @WithDefault("500ms")
        Duration rateLimitBackoff();

        /** Until then after the first attempt the resolver re-sends with the same key (Stripe keeps keys 24 h). */
        @WithDefault("23h")
        Duration idempotencyWindow();

        /** An empty search for a charge first sent longer ago than this is NOT_FOUND. */
        @WithDefault("1h")
        Duration searchLag();

        /** HTTP connections: at least the ceiling of the service's PSP limit. */
        @WithDefault("2048")
        int maxConnections();
    }
}
