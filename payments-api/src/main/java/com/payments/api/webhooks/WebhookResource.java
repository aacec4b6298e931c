package com.payments.api.webhooks;

import com.payments.api.webhooks.WebhookService.Receipt;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.jboss.resteasy.reactive.RestHeader;

/**
 * PSP webhooks (docs/architecture.md §5, docs/resolver.md). Authenticated by the {@code Psp-Signature} HMAC
 * ({@link WebhookService}), not by a bearer credential: open to every caller here.
 */
@Path("/v1/psp/webhooks")
@PermitAll
public class WebhookResource {
    private final WebhookService webhooks;

    public WebhookResource(WebhookService webhooks) {
        this.webhooks = webhooks;
    }

    /** The answer to the PSP: the event was stored (now or before). */
    public record Ack(String eventId, boolean duplicate) {}

    @POST
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Ack> receive(@RestHeader(WebhookSignature.HEADER) String signature, byte[] body) {
        return webhooks.receive(body == null ? new byte[0] : body, signature)
                .map((Receipt receipt) -> new Ack(receipt.eventId(), receipt.duplicate()));
    }
}
