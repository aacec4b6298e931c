package com.payments.api.rest;

import com.payments.api.service.WebhookService;
import com.payments.api.service.WebhookService.Receipt;
import com.payments.api.service.WebhookSignature;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;

/** PSP webhooks (design.md §5, docs/resolver.md). Authenticated by the {@code Psp-Signature} HMAC, not an API key. */
@Path("/v1/psp/webhooks")
@Tag(name = "psp")
public class WebhookResource {
    private final WebhookService webhooks;

    public WebhookResource(WebhookService webhooks) {
        this.webhooks = webhooks;
    }

    /** The answer to the PSP: the event was stored (now or before). */
    public record Ack(String eventId, boolean duplicate) {}

    @POST
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "A PSP event (signed); stored once by id and applied as a hint")
    @APIResponse(responseCode = "200", description = "Stored, now or before (duplicate)")
    @APIResponse(
            responseCode = "400",
            description = "Bad signature, stale timestamp, malformed event or body too large; nothing stored",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "503",
            description = "Webhook secret not configured; nothing stored (Retry-After)",
            content =
                    @Content(mediaType = ProblemMapper.PROBLEM_JSON, schema = @Schema(implementation = Problem.class)))
    public Uni<Ack> receive(@RestHeader(WebhookSignature.HEADER) String signature, byte[] body) {
        return webhooks.receive(body == null ? new byte[0] : body, signature)
                .map((Receipt receipt) -> new Ack(receipt.eventId(), receipt.duplicate()));
    }
}
