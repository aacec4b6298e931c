package com.payments.sandbox.stripe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.config.SandboxConfig;
import com.payments.sandbox.service.PspService;
import com.payments.sandbox.service.SandboxClock;
import com.payments.sandbox.service.WebhookService;
import io.quarkus.logging.Log;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Stripe events ({@code {"id":"evt_…","object":"event","type",…,"data":{"object":…}}}) delivered through the
 * sandbox's webhook delivery (retries and the drop, duplicate and reorder knobs), signed {@code Stripe-Signature:
 * t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>} with one {@code v1} per configured secret, so that
 * a receiver in the middle of a secret roll accepts either.
 */
@ApplicationScoped
public class StripeEvents {

    private final ObjectMapper mapper;
    private final SandboxClock clock;
    private final WebhookService webhooks;
    private final String url;
    private final List<SecretKeySpec> secrets;
    private final WebhookService.Signer signer = new WebhookService.Signer("Stripe-Signature", this::signature);

    public StripeEvents(ObjectMapper mapper, SandboxClock clock, WebhookService webhooks, SandboxConfig config) {
        this.mapper = mapper;
        this.clock = clock;
        this.webhooks = webhooks;
        this.url = config.stripe().webhookUrl().filter(u -> !u.isBlank()).orElse(null);
        this.secrets = config.stripe().webhookSecrets().stream()
                .map(s -> new SecretKeySpec(s.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
                .toList();
        if (url != null) {
            Log.infof("Stripe events go to %s", url);
        }
    }

    /** Sends an event about {@code object} (unless no URL is set); {@code reference} is for the test API's log. */
    void publish(String type, String reference, ObjectNode object) {
        if (url == null) {
            return;
        }
        String id = PspService.newId("evt_");
        ObjectNode event = mapper.createObjectNode();
        event.put("id", id);
        event.put("object", "event");
        event.put("api_version", StripeRoutes.API_VERSION);
        event.put("created", clock.now().getEpochSecond());
        event.putObject("data").set("object", object);
        event.put("livemode", false);
        event.put("pending_webhooks", 1);
        ObjectNode request = event.putObject("request");
        request.putNull("id");
        request.putNull("idempotency_key");
        event.put("type", type);
        try {
            webhooks.deliver(url, signer, id, type, reference, mapper.writeValueAsBytes(event));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code t=<unix seconds>,v1=<hex HMAC>[,v1=<hex HMAC>…]}: one v1 per secret, the current one first. */
    public String signature(long unixSeconds, byte[] body) {
        StringBuilder header = new StringBuilder("t=").append(unixSeconds);
        byte[] prefix = (unixSeconds + ".").getBytes(StandardCharsets.US_ASCII);
        for (SecretKeySpec secret : secrets) {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(secret);
                mac.update(prefix);
                header.append(",v1=").append(HexFormat.of().formatHex(mac.doFinal(body)));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }
        return header.toString();
    }
}
