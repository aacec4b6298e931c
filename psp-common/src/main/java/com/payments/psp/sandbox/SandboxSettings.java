package com.payments.psp.sandbox;

import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * Settings of the {@link SandboxPsp} adapter. The callers' own timeouts (the services' fault-tolerance
 * {@code @Timeout}) usually end a call first; {@code callTimeout} only bounds the HTTP client below them.
 *
 * @param url the PSP's base URL ({@code psp.url}: the sandbox locally)
 * @param connectTimeout how long a connection may take; a connection that fails was never sent
 * @param callTimeout how long one HTTP call may take before its outcome is UNKNOWN
 * @param maxConnections the HTTP/1.1 keep-alive pool: one connection per call in flight, at least the ceiling of the
 *     instance's concurrency limit so that a call holding a permit never queues for a connection
 * @param webhookSecrets the {@code Psp-Signature} secrets (the current one, and the previous one while it rolls)
 * @param webhookTolerance how far a webhook's signed timestamp may be from our clock
 */
public record SandboxSettings(
        URI url,
        Duration connectTimeout,
        Duration callTimeout,
        int maxConnections,
        List<String> webhookSecrets,
        Duration webhookTolerance) {

    public SandboxSettings {
        webhookSecrets = List.copyOf(webhookSecrets);
    }

    @Override
    public String toString() {
        return "SandboxSettings[url=" + url + ", connectTimeout=" + connectTimeout + ", callTimeout=" + callTimeout
                + ", maxConnections=" + maxConnections + ", webhookSecrets=<" + webhookSecrets.size()
                + " redacted>, webhookTolerance=" + webhookTolerance + "]";
    }
}
