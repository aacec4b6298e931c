package com.payments.api.pspevents;

import com.payments.api.common.Refusal;
import com.payments.api.config.ResolutionConfig;
import com.payments.psp.config.PspConfig;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.WebhookRejectedException;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.function.Function;

/**
 * Whether a delivery is a PSP event of ours, before anything is stored: the configured PSP's route, a bounded body,
 * a configured secret, and the signature and its age as the PSP's adapter checks them ({@link PspPort#verifyWebhook}).
 */
@ApplicationScoped
class PspEventVerifier {
    private final PspPort psp;
    private final PspConfig pspConfig;
    private final ResolutionConfig.Webhooks config;
    private final PspEventItems items;

    public PspEventVerifier(PspPort psp, PspConfig pspConfig, ResolutionConfig config, PspEventItems items) {
        this.psp = psp;
        this.pspConfig = pspConfig;
        this.config = config.webhooks();
        this.items = items;
    }

    /** The verified event; a {@link Refusal} (nothing stored) otherwise. */
    PspEvent verify(String provider, byte[] body, Function<String, String> header) {
        if (!provider.equals(psp.provider())) {
            throw items.reject(new Refusal(
                    Refusal.Kind.NOT_FOUND,
                    "webhook_provider_not_configured",
                    "Not found",
                    "This deployment's PSP is " + psp.provider() + "; its webhooks go to " + path(psp.provider()),
                    null));
        }
        if (body.length > config.maxBodyBytes()) {
            throw items.reject(Refusal.invalid("body_too_large", "The request body is too large"));
        }
        if (!secretConfigured(provider)) {
            throw new Refusal(
                    Refusal.Kind.UNAVAILABLE,
                    "webhooks_not_configured",
                    "Webhooks not configured",
                    "The webhook secret is not configured; deliver again later",
                    60);
        }
        PspEvent event;
        try {
            event = psp.verifyWebhook(body, header);
        } catch (WebhookRejectedException e) {
            String name = signatureHeader(provider);
            throw items.reject(
                    switch (e.reason()) {
                        case SIGNATURE ->
                            Refusal.invalid(
                                    "invalid_webhook_signature",
                                    "The " + name + " header is missing or does not match");
                        case STALE ->
                            Refusal.invalid(
                                    "stale_webhook", "The " + name + " timestamp is outside the accepted tolerance");
                        case NOT_AN_EVENT ->
                            Refusal.invalid(
                                    "invalid_webhook", "The event must be a JSON object with id, type and data");
                    });
        }
        if (event.eventId().isEmpty() || event.eventId().length() > 255) {
            throw items.reject(Refusal.invalid("invalid_webhook", "The event id must have 1 to 255 characters"));
        }
        return event;
    }

    static String path(String provider) {
        return provider.equals("stripe") ? "/v1/psp/stripe/webhooks" : "/v1/psp/webhooks";
    }

    static String signatureHeader(String provider) {
        return provider.equals("stripe") ? "Stripe-Signature" : "Psp-Signature";
    }

    /**
     * Without a secret nothing can be verified: 503, so that the PSP delivers again once it is set. The sandbox's
     * current secret is required ({@code payments.webhooks.secret}; a previous one alone is not enough, docs/resolver.md);
     * Stripe's: any of {@code psp.stripe.webhook-secrets}.
     */
    private boolean secretConfigured(String provider) {
        if (provider.equals("stripe")) {
            return pspConfig.stripe().webhookSecrets().orElse(List.of()).stream()
                    .anyMatch(s -> s != null && !s.isBlank());
        }
        return config.secret().filter(s -> !s.isBlank()).isPresent();
    }
}
