package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * Merchant webhook endpoints ({@code payments.webhooks.*}, docs/api.md "Webhook endpoints"). The PSP's webhooks to us
 * share the prefix ({@link ResolutionConfig.Webhooks}); these settings are about our webhooks to merchants.
 */
@ConfigMapping(prefix = "payments.webhooks")
public interface WebhookEndpointsConfig {

    /** Accept {@code http://} endpoint URLs (local runs only; production is https). */
    @WithDefault("false")
    boolean allowHttp();

    /** Accept endpoints on loopback addresses (127.0.0.0/8, ::1): the test profile and the local stack only. */
    @WithDefault("false")
    boolean allowLoopback();

    /** How long a rotated-out signing secret still signs deliveries beside the new one. */
    @WithDefault("24h")
    Duration secretGrace();

    /** Endpoints a merchant may have at once (not counting deleted ones). */
    @WithDefault("16")
    int maxEndpoints();
}
