package com.payments.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** The operator console under {@code /console} ({@code payments.console.*}); docs/console.md. */
@ConfigMapping(prefix = "payments.console")
public interface ConsoleConfig {

    /** How long a console login lasts; the operator logs in again after it. */
    @WithDefault("8h")
    Duration sessionTtl();

    /**
     * Marks the session cookie {@code Secure} (sent over HTTPS only). On in production; off in dev and test, which
     * serve plain HTTP on loopback.
     */
    @WithDefault("true")
    boolean secureCookie();

    /** Rows per page of the console's tables (operations items, breaks, runs). */
    @WithDefault("50")
    int pageSize();
}
