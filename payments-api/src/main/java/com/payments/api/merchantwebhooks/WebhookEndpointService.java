package com.payments.api.merchantwebhooks;

import com.payments.api.common.Page;
import com.payments.api.common.Refusal;
import com.payments.api.config.WebhookEndpointsConfig;
import com.payments.api.events.EventRepository;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/** The merchant's webhook endpoints (docs/api.md "Webhook endpoints"): registration, secrets, deliveries. */
@ApplicationScoped
public class WebhookEndpointService {

    private final Pool pool;
    private final WebhookEndpointRepository endpoints;
    private final EventRepository events;
    private final EndpointUrlCheck urlCheck;
    private final WebhookEndpointsConfig config;
    private final WebhookSecretCipher cipher;

    public WebhookEndpointService(
            Pool pool,
            WebhookEndpointRepository endpoints,
            EventRepository events,
            EndpointUrlCheck urlCheck,
            WebhookEndpointsConfig config,
            WebhookSecretCipher cipher) {
        this.pool = pool;
        this.cipher = cipher;
        this.endpoints = endpoints;
        this.events = events;
        this.urlCheck = urlCheck;
        this.config = config;
    }

    /** A secret is only ever stored sealed: without a key, no endpoint is created or rotated (503, nothing stored). */
    private void requireKey() {
        if (!cipher.configured()) {
            throw new Refusal(
                    Refusal.Kind.UNAVAILABLE,
                    "webhook_secrets_not_configured",
                    "Webhook secrets key not configured",
                    "This deployment has no key to encrypt webhook signing secrets (WEBHOOK_SECRETS_KEYS); nothing was"
                            + " stored",
                    null);
        }
    }

    /** A new signing secret: {@code whsec_} and the base64 of 32 random bytes (Standard Webhooks). */
    static String newSecret() {
        byte[] key = new byte[32];
        // No static SecureRandom: the native build initializes this class at build time and refuses a seeded
        // generator in the image (CI's native build failed on it). A new instance draws from the operating system's.
        new SecureRandom().nextBytes(key);
        return "whsec_" + Base64.getEncoder().encodeToString(key);
    }

    /** Registers the endpoint after its URL passed the SSRF check; the answer carries the secret. */
    public Uni<WebhookEndpointView> create(UUID merchantId, WebhookEndpointRequest request) {
        requireKey();
        String secret = newSecret();
        UUID id = UUID.randomUUID();
        UUID secretId = UUID.randomUUID();
        // stored sealed only; the plaintext leaves this process once, in this answer
        WebhookSecretCipher.Sealed sealed = cipher.seal(id, secretId, secret);
        return urlCheck.check(request.url())
                .flatMap(ok -> pool.withTransaction(conn -> endpoints
                        .lockMerchant(conn, merchantId)
                        .flatMap(locked -> endpoints.insert(
                                conn, id, merchantId, request, secretId, sealed, config.maxEndpoints()))))
                .map(created -> {
                    if (created == null) {
                        throw Refusal.invalid(
                                "too_many_endpoints",
                                "A merchant can have at most " + config.maxEndpoints()
                                        + " webhook endpoints; delete one first");
                    }
                    return created.withSecret(secret);
                });
    }

    public Uni<Page.Slice<WebhookEndpointView>> list(UUID merchantId, Page page) {
        return endpoints.page(pool, merchantId, page);
    }

    public Uni<WebhookEndpointView> get(UUID merchantId, UUID id) {
        return endpoints.find(pool, merchantId, id).map(WebhookEndpointService::found);
    }

    public Uni<WebhookEndpointView> delete(UUID merchantId, UUID id) {
        return endpoints.delete(pool, merchantId, id).map(WebhookEndpointService::found);
    }

    /** ENABLED again after the delivery service disabled it; a deleted endpoint stays deleted (409). */
    public Uni<WebhookEndpointView> enable(UUID merchantId, UUID id) {
        return endpoints
                .enable(pool, merchantId, id)
                .flatMap(enabled -> enabled != null
                        ? Uni.createFrom().item(enabled)
                        : endpoints.find(pool, merchantId, id).map(existing -> {
                            throw existing == null ? Refusal.notFound() : deleted();
                        }));
    }

    /**
     * A new current secret, returned once; the old one still signs for {@code payments.webhooks.secret-grace}. Under
     * the endpoint's row lock, so concurrent rotations run one after the other and leave one current secret.
     */
    public Uni<WebhookEndpointView> rotateSecret(UUID merchantId, UUID id) {
        requireKey();
        String secret = newSecret();
        UUID secretId = UUID.randomUUID();
        WebhookSecretCipher.Sealed sealed = cipher.seal(id, secretId, secret);
        return pool.withTransaction(
                conn -> endpoints.findForUpdate(conn, merchantId, id).flatMap(endpoint -> {
                    if (endpoint == null) {
                        throw Refusal.notFound();
                    }
                    if (endpoint.status().equals("DELETED")) {
                        throw deleted();
                    }
                    return endpoints
                            .retireCurrentSecret(conn, id, config.secretGrace())
                            .flatMap(retired -> endpoints.addCurrentSecret(conn, id, secretId, sealed))
                            .map(added -> endpoint.withSecret(secret));
                }));
    }

    /** A page of the endpoint's deliveries, newest first; 404 for an endpoint that is not the merchant's. */
    public Uni<Page.Slice<DeliveryView>> deliveries(UUID merchantId, UUID endpointId, Page page) {
        return endpoints
                .find(pool, merchantId, endpointId)
                .map(WebhookEndpointService::found)
                .flatMap(endpoint -> endpoints.deliveries(pool, merchantId, endpointId, page));
    }

    /**
     * Sends the event again: one new delivery to each ENABLED endpoint that receives its type, or to {@code
     * endpointId} only. 404 for an event that is not the merchant's (or no longer in the feed); 409 when no endpoint
     * matches.
     */
    public Uni<List<DeliveryView>> redeliver(UUID merchantId, UUID eventId, UUID endpointId) {
        return events.find(pool, merchantId, eventId)
                .flatMap(event -> {
                    if (event == null) {
                        throw Refusal.notFound();
                    }
                    return endpoints.redeliver(pool, merchantId, eventId, event.type(), endpointId);
                })
                .map(created -> {
                    if (created.isEmpty()) {
                        throw new Refusal(
                                Refusal.Kind.CONFLICT,
                                "no_matching_endpoint",
                                "No matching endpoint",
                                "No enabled webhook endpoint of yours receives this event's type"
                                        + (endpointId == null ? "" : " under that endpointId"),
                                null);
                    }
                    return created;
                });
    }

    private static WebhookEndpointView found(WebhookEndpointView endpoint) {
        if (endpoint == null) {
            throw Refusal.notFound();
        }
        return endpoint;
    }

    private static Refusal deleted() {
        return new Refusal(
                Refusal.Kind.CONFLICT, "endpoint_deleted", "Endpoint deleted", "The webhook endpoint is deleted", null);
    }
}
