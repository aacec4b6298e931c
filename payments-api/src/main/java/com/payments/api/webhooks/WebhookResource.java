package com.payments.api.webhooks;

import com.payments.api.rest.ApiDefinition;
import com.payments.api.rest.Problem;
import com.payments.api.rest.ProblemMapper;
import com.payments.api.webhooks.WebhookService.Receipt;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestHeader;

/**
 * PSP webhooks (docs/architecture.md §5, docs/resolver.md). Authenticated by the {@code Psp-Signature} HMAC
 * ({@link WebhookService}), not by a bearer credential: open to every caller here.
 */
@Path("/v1/psp/webhooks")
@PermitAll
@Tag(name = "psp")
@SecurityRequirement(name = ApiDefinition.PSP_SIGNATURE)
public class WebhookResource {
    private final WebhookService webhooks;

    public WebhookResource(WebhookService webhooks) {
        this.webhooks = webhooks;
    }

    /** The answer to the PSP: the event was stored (now or before). */
    public record Ack(String eventId, boolean duplicate) {}

    @POST
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(
            operationId = "receivePspWebhook",
            summary = "A PSP event (signed); stored once by id and applied as a hint",
            description = "Called by the PSP (docs/architecture.md §5), not by merchants")
    @RequestBody(
            required = true,
            description = "The PSP's event: a JSON object with id, type and data (signed as sent)",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(type = SchemaType.OBJECT)))
    @APIResponse(
            responseCode = "200",
            description = "Stored, now or before (duplicate)",
            content =
                    @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = Ack.class),
                            examples =
                                    @ExampleObject(
                                            name = "stored",
                                            value = "{\"eventId\":\"evt_3f1c2a7e\",\"duplicate\":false}")))
    @APIResponse(
            responseCode = "400",
            description = "Nothing stored. Codes: invalid_webhook_signature, stale_webhook, invalid_webhook,"
                    + " body_too_large",
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "invalid_webhook_signature",
                                            value = "{\"type\":\"" + ApiDefinition.TYPE + "invalid_webhook_signature\","
                                                    + "\"title\":\"Bad request\",\"status\":400,\"detail\":\"The"
                                                    + " Psp-Signature header is missing or does not match\",\"code\":"
                                                    + "\"invalid_webhook_signature\"}")))
    @APIResponse(responseCode = "406", ref = "NotAcceptable")
    @APIResponse(responseCode = "413", ref = "PayloadTooLarge")
    @APIResponse(responseCode = "500", ref = "InternalError")
    @APIResponse(
            responseCode = "503",
            description = "`webhooks_not_configured`: no webhook secret configured; nothing stored, deliver again"
                    + " after Retry-After",
            headers = @Header(name = "Retry-After", ref = "RetryAfter"),
            content =
                    @Content(
                            mediaType = ProblemMapper.PROBLEM_JSON,
                            schema = @Schema(implementation = Problem.class),
                            examples =
                                    @ExampleObject(
                                            name = "webhooks_not_configured",
                                            value = "{\"type\":\"" + ApiDefinition.TYPE + "webhooks_not_configured\","
                                                    + "\"title\":\"Webhooks not configured\",\"status\":503,"
                                                    + "\"detail\":\"The webhook secret is not configured; deliver again"
                                                    + " later\",\"code\":\"webhooks_not_configured\"}")))
    public Uni<Ack> receive(
            @Parameter(hidden = true) @RestHeader(WebhookSignature.HEADER) String signature, byte[] body) {
        return webhooks.receive(body == null ? new byte[0] : body, signature)
                .map((Receipt receipt) -> new Ack(receipt.eventId(), receipt.duplicate()));
    }
}
