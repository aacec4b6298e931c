package com.payments.delivery;

import com.payments.contracts.webhooks.WebhookUrlPolicy;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** Configuration of webhook-delivery (prefix {@code payments.webhooks}; docs/webhook-delivery.md "Settings"). */
@ConfigMapping(prefix = "payments.webhooks")
public interface WebhooksConfig {

    /** Plain http endpoints (local runs only; production sends to https only). */
    @WithDefault("false")
    boolean allowHttp();

    /** Endpoints on 127.0.0.0/8 and ::1 (tests and the local stack only). */
    @WithDefault("false")
    boolean allowLoopback();

    /**
     * Waits after the 1st, 2nd, ... failed attempt; the last one repeats. Each wait is drawn uniformly from
     * [0, value] (full jitter).
     */
    @WithDefault("5s,5m,30m,2h,5h,10h")
    List<Duration> schedule();

    /** A delivery still failing this long after it was created ends FAILED; its last attempt is at this age at most. */
    @WithDefault("3d")
    Duration giveUpAfter();

    /** An endpoint failing without a success for this long is DISABLED, with an operations item. */
    @WithDefault("3d")
    Duration disableAfter();

    /** Limit of one attempt: connect, send, and the receiver's answer. */
    @WithDefault("10s")
    Duration timeout();

    /**
     * How long a leased delivery is hidden from other senders; a killed sender's deliveries are sent again after it.
     * Longer than {@link #timeout()}.
     */
    @WithDefault("1m")
    Duration lease();

    /** Attempts in flight per endpoint and instance at most: a slow endpoint holds no more than this. */
    @WithDefault("8")
    int perEndpointConcurrency();

    /** Attempts in flight per instance at most. */
    @WithDefault("256")
    int maxInFlight();

    /** How often the sender leases due deliveries. */
    @WithDefault("500ms")
    Duration pollInterval();

    /** Period of the due-backlog gauge's query (a Quarkus scheduler {@code every} value; {@code off} disables it). */
    @WithDefault("30s")
    String metricsEvery();

    /**
     * Name of a Quarkus TLS configuration ({@code quarkus.tls.<name>.trust-store.*}) whose trust store verifies the
     * receivers' certificates instead of the JVM's default CAs (a private CA, tests). Trust-all is refused.
     */
    Optional<String> tlsConfigurationName();

    default WebhookUrlPolicy urlPolicy() {
        return new WebhookUrlPolicy(allowHttp(), allowLoopback());
    }
}
