package com.payments.api.merchantwebhooks;

import com.payments.api.common.Refusal;
import com.payments.api.config.WebhookEndpointsConfig;
import com.payments.contracts.webhooks.HostResolver;
import com.payments.contracts.webhooks.WebhookUrlPolicy;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

/**
 * The SSRF check of an endpoint URL at registration (contracts' {@link WebhookUrlPolicy}): its shape, then every
 * address its host resolves to. webhook-delivery checks the addresses again when it connects.
 */
@ApplicationScoped
public class EndpointUrlCheck {
    private final WebhookUrlPolicy policy;
    private final HostResolver resolver;

    @Inject
    public EndpointUrlCheck(WebhookEndpointsConfig config, HostResolver resolver) {
        this(new WebhookUrlPolicy(config.allowHttp(), config.allowLoopback()), resolver);
    }

    EndpointUrlCheck(WebhookUrlPolicy policy, HostResolver resolver) {
        this.policy = policy;
        this.resolver = resolver;
    }

    /** Completes when the URL may be registered; fails with a 400 {@link Refusal} when not. */
    public Uni<Void> check(String url) {
        Optional<String> problem = policy.checkUrl(url);
        if (problem.isPresent()) {
            // the policy's texts are fixed, never the URL
            return Uni.createFrom().failure(Refusal.invalid("invalid_url", problem.get()));
        }
        String host = URI.create(url).getHost();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return resolver.resolve(host)
                .onFailure(UnknownHostException.class)
                .transform(e -> Refusal.invalid("webhook_url_unresolvable", "The url's host does not resolve"))
                .invoke(this::checkAddresses)
                .replaceWithVoid();
    }

    private void checkAddresses(List<InetAddress> addresses) {
        if (addresses.isEmpty()) {
            throw Refusal.invalid("webhook_url_unresolvable", "The url's host does not resolve");
        }
        for (InetAddress address : addresses) {
            Optional<String> refused = policy.checkAddress(address);
            if (refused.isPresent()) {
                throw Refusal.invalid("webhook_url_forbidden", "The url's host resolves to " + refused.get());
            }
        }
    }
}
