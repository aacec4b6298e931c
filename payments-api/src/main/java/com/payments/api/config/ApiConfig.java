package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Configuration of payments-api ({@code payments.*}). PSP fault-tolerance timings: see application.properties. */
@ConfigMapping(prefix = "payments")
public interface ApiConfig {

    /** Idempotency keys. */
    Idempotency idempotency();

    /** Merchant authentication. */
    Auth auth();

    /** Operator API. */
    Admin admin();

    /** Demo merchants for local runs. */
    Demo demo();

    /** Answers when the PSP cannot be called. */
    Psp psp();

    /** Request limits. */
    Limits limits();

    /** The capture path's two statements. */
    Capture capture();

    /** The merchants' events feed ({@code GET /v1/events}). */
    Events events();

    /** Manual payments' authorizations (docs/api.md "Manual capture"). */
    Authorizations authorizations();

    interface Authorizations {
        /**
         * How long an authorization (AUTHORIZED, counted from {@code authorized_at}) may wait for its capture or cancel;
         * then the expiry job voids it at the PSP and it becomes EXPIRED. 7 days, as card schemes and Stripe.
         */
        @WithDefault("7d")
        Duration expireAfter();

        /** How often each instance runs the expiry job ({@code off} disables it). */
        @WithDefault("1m")
        String expireEvery();

        /** Authorizations claimed per run and instance at most. */
        @WithDefault("100")
        int expireBatchSize();
    }

    interface Events {
        /** How long an event stays in the feed (the API promises 30 days). */
        @WithDefault("30d")
        Duration retention();

        /** How often events older than the retention are deleted ({@code off} disables it). */
        @WithDefault("10m")
        String cleanupEvery();

        /** Events deleted per statement. */
        @WithDefault("1000")
        int cleanupBatchSize();

        /** Statements per run at most. */
        @WithDefault("100")
        int cleanupMaxBatches();
    }

    interface Idempotency {
        /** How long a completed key is kept (and replayed); between 24h and 72h, checked at startup. */
        @WithDefault("24h")
        Duration retention();

        /** How often the housekeeping job runs ({@code off} disables it). */
        @WithDefault("5m")
        String cleanupEvery();

        /** Delay of the first housekeeping run after startup. */
        @WithDefault("1m")
        String cleanupDelay();

        /** Keys deleted per statement by the housekeeping job. */
        @WithDefault("1000")
        int cleanupBatchSize();

        /** Statements per housekeeping run at most (bounds the work of one run). */
        @WithDefault("100")
        int cleanupMaxBatches();

        /** Retry-After (seconds) on a 409 for a key whose request is still in flight. */
        @WithDefault("1")
        int inFlightRetryAfterSeconds();
    }

    interface Auth {
        /**
         * How long a successful API-key lookup is cached in this instance. A revoked key or a suspended merchant
         * keeps working here for at most this long.
         */
        @WithDefault("10s")
        Duration cacheTtl();

        /**
         * How long an unknown API key is remembered as unknown in this instance (a repeat costs no query). A key
         * issued through another instance's operator API works here within this time; through this instance's, at
         * once.
         */
        @WithDefault("30s")
        Duration negativeCacheTtl();

        /**
         * Failed authentications (missing, malformed, unknown or revoked key) allowed per client address in
         * {@link #failureWindow()}, as a burst; beyond them 429 too_many_failed_authentications, and keys not
         * known to this instance are not looked up. Per instance.
         */
        @WithDefault("20")
        int maxFailures();

        /** The time in which the allowance of {@link #maxFailures()} refills, evenly. */
        @WithDefault("1m")
        Duration failureWindow();
    }

    interface Admin {
        /** Bearer token of the operator API ({@code /v1/admin}). None: the operator API answers 401 to everyone. */
        Optional<String> token();

        /**
         * Serve the operator API ({@code /v1/admin/*}) and the operator console ({@code /console/*}) only on the
         * management interface ({@code quarkus.management.port}); the merchant port then answers them 404. Off by
         * default, so that a local run reaches them on the merchant port too; the Kubernetes manifests turn it on
         * (docs/deployment.md).
         */
        @WithDefault("false")
        boolean managementOnly();
    }

    interface Demo {
        /**
         * Create the demo merchants with their documented test keys at startup (docs/api.md). Refused in the prod
         * profile.
         */
        @WithDefault("false")
        boolean enabled();
    }

    interface Psp {
        /** Retry-After (seconds) on a 503 (circuit open, PSP limit saturated, PSP unreachable, database busy). */
        @WithDefault("5")
        int unavailableRetryAfterSeconds();

        /** The adaptive limit of concurrent PSP calls of this instance (captures and the resolver share it). */
        Limit limit();

        interface Limit {
            /** Limit at start, before any round trip was measured. */
            @WithDefault("64")
            int initial();

            /** The limit never goes below this, however slow the PSP gets. */
            @WithDefault("16")
            int min();

            /**
             * Hard ceiling of concurrent PSP calls per instance. The adapters' connection pools
             * ({@code psp.sandbox.max-connections}, {@code psp.stripe.max-connections})
             * follow it (one HTTP/1.1 keep-alive connection per call in flight), so a call under the limit never
             * waits for a connection. 2,048 covers a PSP at 1 s with 2,000 captures in flight (docs/capacity.md).
             */
            @WithDefault("2048")
            int max();

            /**
             * How long a capture waits for a PSP permit when the limit is reached; then it is shed (503 with
             * Retry-After, nothing stored, key released), counted in {@code payments_shed_total{reason="psp_limit"}}.
             */
            @WithDefault("2s")
            Duration maxWait();

            /** Calls that may wait for a permit at once; one more is shed at once. */
            @WithDefault("4096")
            int maxWaiting();
        }

        /** How long a new PROCESSING payment waits before the resolver treats it as stuck. */
        @WithDefault("60s")
        Duration stuckAfter();
    }

    interface Limits {
        /** Largest accepted JSON body of a merchant request, in bytes (larger: 400 body_too_large). */
        @WithDefault("16384")
        int maxBodyBytes();
    }

    interface Capture {
        /**
         * Statements of each kind (key claim, outcome) one instance runs at a time. Captures that arrive while all
         * run wait and go together in the next one, one row each: fewer statements in flight make bigger ones, which
         * cost PostgreSQL less per capture, but one slow statement then holds up more captures (docs/benchmarks.md).
         * Each uses a connection of the pool while it runs.
         */
        @WithDefault("1")
        int statementsInFlight();

        /** Captures in one statement at most. */
        @WithDefault("32")
        int maxBatchSize();

        /**
         * How long a capture or a refund reservation may wait for its first statement (the key claim, the
         * reservation) to start; then it is shed (503 {@code service_overloaded} with Retry-After, nothing stored),
         * counted in {@code payments_shed_total{reason="database"}}. The wait is the statement queue's, which grows
         * when the database or the connection pool cannot keep up.
         */
        @WithDefault("2s")
        Duration databaseWaitBudget();
    }
}
