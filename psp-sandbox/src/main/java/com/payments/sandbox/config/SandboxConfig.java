package com.payments.sandbox.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/**
 * Configuration of the PSP sandbox. Every fault knob here is the start value of the runtime
 * settings, which the test API ({@code PUT /test/faults}) can change while the sandbox runs and
 * {@code DELETE /test/faults} resets to these values. Rates are fractions between 0.0 and 1.0.
 */
@ConfigMapping(prefix = "psp")
public interface SandboxConfig {

    /** How long {@code tok_timeoutCaptured}, {@code tok_timeoutNotReceived} and injected timeouts wait before answering. */
    @WithDefault("30s")
    Duration timeoutDelay();

    /**
     * How long an authorization ({@code POST /v1/authorizations}, or a Stripe PaymentIntent with {@code
     * capture_method=manual}) stays capturable, on the sandbox clock; after it the authorization is canceled with the
     * reason {@code expired} (Stripe: {@code automatic}). Stripe and the card schemes: 7 days.
     */
    @WithDefault("7d")
    Duration authorizationExpiry();

    /** Latency added to every {@code /v1} answer. */
    Latency latency();

    /** Random failures of {@code /v1} calls. */
    Faults faults();

    /** Outgoing signed webhooks. */
    Webhook webhook();

    /** Settlement files. */
    Settlement settlement();

    /** The Stripe-compatible mode under {@code /stripe} (docs/psp-sandbox.md, "Stripe mode"). */
    Stripe stripe();

    /** The Stripe-compatible mode. */
    interface Stripe {
        /** Absolute URL Stripe-style events are POSTed to; none = no Stripe events. */
        Optional<String> webhookUrl();

        /**
         * Signing secrets of {@code Stripe-Signature}: one {@code v1} per secret, so that a receiver rolling its secret
         * accepts either. The first is the current one.
         */
        @WithDefault("whsec_stripe_sandbox")
        java.util.List<String> webhookSecrets();

        /** How long an idempotency key is kept, on the sandbox clock (Stripe: at least 24 hours). */
        @WithDefault("24h")
        Duration idempotencyKeyTtl();

        /** A new PaymentIntent becomes visible to search this long after it was written, on the sandbox clock. */
        @WithDefault("1s")
        Duration searchDelay();

        /** A refund of a {@code pm_card_refundFail} charge stays {@code pending} this long, then fails. */
        @WithDefault("2s")
        Duration refundFailureDelay();

        /** The fee of a dispute, in minor units (Stripe charges 15.00 in most currencies). */
        @WithDefault("1500")
        long disputeFee();
    }

    /** Latency knob: every answer waits {@code fixed + uniform random in [0, spread)}. */
    interface Latency {
        /** Fixed latency added to every {@code /v1} answer. */
        @WithDefault("0ms")
        Duration fixed();

        /** Upper bound (exclusive) of the uniformly random latency added on top of {@code fixed}. */
        @WithDefault("0ms")
        Duration spread();
    }

    /** Fault knobs for the {@code /v1} calls. */
    interface Faults {
        /** Fraction of {@code /v1} calls answered with a 500 before anything is recorded. */
        @WithDefault("0")
        double errorRate();

        /**
         * Fraction of POSTs that are processed and recorded but answered only after {@code timeout-delay}
         * (a lost response, like {@code tok_timeoutCaptured}).
         */
        @WithDefault("0")
        double timeoutRate();

        /**
         * Fraction of POSTs that record nothing and answer 504 after {@code timeout-delay} (a request
         * the PSP never got, like the first {@code tok_timeoutNotReceived}).
         */
        @WithDefault("0")
        double notReceivedRate();

        /** Stripe mode only: fraction of {@code /stripe/v1} calls answered 429 {@code rate_limit}, nothing recorded. */
        @WithDefault("0")
        double rateLimitRate();
    }

    /** Webhook delivery. */
    interface Webhook {
        /** Absolute URL the events are POSTed to (e.g. {@code http://localhost:8080/v1/psp/webhooks}); none = no webhooks. */
        Optional<String> url();

        /** Secret of the {@code Psp-Signature} HMAC-SHA256. */
        @WithDefault("whsec_sandbox_secret")
        String secret();

        /** Fraction of events delivered twice (two independent deliveries of the same event id). */
        @WithDefault("0")
        double duplicateRate();

        /** Fraction of events held back by {@code reorder-delay}, so that later events overtake them. */
        @WithDefault("0")
        double reorderRate();

        /** Fraction of events never sent. */
        @WithDefault("0")
        double dropRate();

        /** How long a reordered event is held back before its first attempt. */
        @WithDefault("2s")
        Duration reorderDelay();

        /** Attempts per delivery (the first one included) before the sandbox gives up. */
        @WithDefault("10")
        int maxAttempts();

        /** Wait before the second attempt; doubles after every failed attempt. */
        @WithDefault("500ms")
        Duration initialBackoff();

        /** Upper bound of the wait between attempts. */
        @WithDefault("60s")
        Duration maxBackoff();

        /** Timeout of one delivery attempt; a timeout counts as a failed attempt. */
        @WithDefault("5s")
        Duration requestTimeout();
    }

    /** Settlement files. */
    interface Settlement {
        /** Fee per settled charge in basis points of the amount (290 = 2.9 %), rounded half up. */
        @WithDefault("290")
        int feeBps();

        /** Fixed fee per settled charge, in minor units of the charge's currency. */
        @WithDefault("30")
        long feeFixed();

        /** Items created in the last {@code cutoff-window} of a UTC day settle in the next day's file. */
        @WithDefault("5m")
        Duration cutoffWindow();

        /** Discrepancies injected into every settlement file (for demos and reconciliation tests). */
        Discrepancies discrepancies();
    }

    /** Discrepancy injection; the counts are per file, the choice of lines is deterministic per day and seed. */
    interface Discrepancies {
        /** Lines removed from each file. */
        @WithDefault("0")
        int drop();

        /** Lines whose amount is changed. */
        @WithDefault("0")
        int amountMismatch();

        /** CHARGE lines added for charges that never happened. */
        @WithDefault("0")
        int phantom();

        /** Seed of the choice of lines (combined with the day). */
        @WithDefault("42")
        long seed();
    }
}
