package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Configuration of the resolver of UNKNOWN and stuck payments ({@code payments.resolver.*}) and of PSP webhooks
 * ({@code payments.webhooks.*}); docs/resolver.md. Same root as {@link ApiConfig}, in its own interface.
 */
@ConfigMapping(prefix = "payments")
public interface ResolutionConfig {

    /** The resolver. */
    Resolver resolver();

    /** PSP webhooks. */
    Webhooks webhooks();

    interface Resolver {
        /** How often each instance looks for due payments ({@code off} disables the schedule). */
        @WithDefault("5s")
        String every();

        /** Payments claimed per run and instance at most. */
        @WithDefault("50")
        int batchSize();

        /**
         * How long a claim keeps other instances away from a payment. Must exceed the PSP lookup plus a re-sent charge
         * (their timeouts): when it expires, another instance may take the payment over (the first one then records
         * nothing).
         */
        @WithDefault("60s")
        Duration lease();

        /** Wait before the next attempt after the n-th still-unknown attempt; the last value repeats. */
        @WithDefault("10s,1m,5m,1h,24h")
        List<Duration> backoff();

        /**
         * How long the resolver works a pending PSP call before it stops and opens an operations item
         * ({@code resolver_deadline}) instead of scheduling another attempt: counted from the payment's creation for a
         * charge or an authorization, from the capture's or void's start for those of an authorization.
         */
        @WithDefault("72h")
        Duration deadline();
    }

    interface Webhooks {
        /**
         * HMAC-SHA256 secret of the {@code Psp-Signature} header (env {@code PSP_WEBHOOK_SECRET}). No default outside
         * dev/test: without it every webhook is refused with 503 (the PSP retries) and nothing is stored.
         */
        Optional<String> secret();

        /**
         * The secret being rolled out of use (env {@code PSP_WEBHOOK_SECRET_PREVIOUS}): while it is set, a signature
         * under it is accepted as well as one under {@link #secret()}, so that the PSP can be switched to the new
         * secret after payments-api (docs/resolver.md, "Rotating the webhook secret"). Unset (the default) outside a
         * roll; a blank value is no key.
         */
        Optional<String> previousSecret();

        /** Largest accepted |now - t| of a signature; older or future-dated deliveries are refused (400). */
        @WithDefault("5m")
        Duration tolerance();

        /** Largest accepted webhook body, in bytes (larger: 400 body_too_large). */
        @WithDefault("32768")
        int maxBodyBytes();

        /**
         * How long after its creation a dispute of a PSP charge we do not know yet (its capture's answer was lost and
         * is not settled) is refused with 409 so that the PSP delivers it again; after that it is stored and queued as
         * {@code unknown_payment}.
         */
        @WithDefault("1h")
        Duration disputeWait();
    }
}
