package com.payments.psp.config;

import com.payments.psp.port.PspPort;
import com.payments.psp.sandbox.SandboxPsp;
import com.payments.psp.sandbox.SandboxSettings;
import com.payments.psp.stripe.StripePsp;
import com.payments.psp.stripe.StripeSettings;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.List;

/**
 * The service's one {@link PspPort}, the adapter {@code psp.provider} names. The adapters get no concurrency limit:
 * the services take their {@link com.payments.psp.PspConcurrencyLimit} permit around each call themselves, outside
 * their circuit breakers, so that a call shed by the limit never counts as a PSP failure.
 */
public class PspPortProducer {
    private static final System.Logger LOG = System.getLogger(PspPortProducer.class.getName());

    @Produces
    @Singleton
    PspPort pspPort(PspConfig config, Vertx vertx, MeterRegistry registry) {
        PspPort port =
                switch (config.provider()) {
                    case "sandbox" -> new SandboxPsp(vertx, sandbox(config), null, registry, Clock.systemUTC());
                    case "stripe" -> new StripePsp(vertx, stripe(config.stripe()), null, registry, Clock.systemUTC());
                    default ->
                        throw new IllegalArgumentException(
                                "psp.provider must be sandbox or stripe, not '" + config.provider() + "'");
                };
        return port;
    }

    /** Builds the adapter at startup, so that a wrong provider or a missing {@code STRIPE_API_KEY} stops the service. */
    void startup(@Observes StartupEvent event, PspPort port) {
        LOG.log(System.Logger.Level.INFO, "PSP provider: {0}", port.provider());
    }

    void close(@Disposes PspPort port) {
        port.close();
    }

    static SandboxSettings sandbox(PspConfig config) {
        PspConfig.Sandbox sandbox = config.sandbox();
        return new SandboxSettings(
                sandbox.url().orElse(config.url()),
                sandbox.connectTimeout(),
                sandbox.callTimeout(),
                sandbox.maxConnections(),
                sandbox.webhookSecrets().orElse(List.of()),
                sandbox.webhookTolerance());
    }

    /** Fails with a clear message when {@code STRIPE_API_KEY} is not set. */
    static StripeSettings stripe(PspConfig.Stripe stripe) {
        return new StripeSettings(
                stripe.apiBase(),
                stripe.apiKey().orElse(null),
                stripe.webhookSecrets().orElse(List.of()),
                stripe.apiVersion(),
                stripe.callTimeout(),
                stripe.webhookTolerance(),
                stripe.rateLimitRetries(),
                stripe.rateLimitBackoff(),
                stripe.idempotencyWindow(),
                stripe.searchLag(),
                stripe.maxConnections());
    }
}
