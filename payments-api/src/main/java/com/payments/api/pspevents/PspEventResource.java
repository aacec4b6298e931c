package com.payments.api.pspevents;

import com.payments.api.pspevents.PspEventService.Receipt;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

/**
 * PSP webhooks (docs/architecture.md §5, docs/resolver.md, docs/stripe.md), one route per PSP; only the configured
 * PSP's route acts, the other answers 404. Authenticated by the PSP's signature header (verified by the
 * {@link com.payments.psp.port.PspPort}), not by a bearer credential: open to every caller here.
 */
@Path("/v1/psp")
@PermitAll
public class PspEventResource {
    private final PspEventService webhooks;

    public PspEventResource(PspEventService webhooks) {
        this.webhooks = webhooks;
    }

    /** The answer to the PSP: the event was stored (now or before). */
    public record Ack(String eventId, boolean duplicate) {}

    /** The sandbox protocol's webhooks, signed {@code Psp-Signature}. */
    @POST
    @Path("/webhooks")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Ack> receive(HttpHeaders headers, byte[] body) {
        return receive("sandbox", headers, body);
    }

    /** Stripe's events, signed {@code Stripe-Signature}. */
    @POST
    @Path("/stripe/webhooks")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<Ack> receiveStripe(HttpHeaders headers, byte[] body) {
        return receive("stripe", headers, body);
    }

    private Uni<Ack> receive(String provider, HttpHeaders headers, byte[] body) {
        return webhooks.receive(provider, body == null ? new byte[0] : body, headers::getHeaderString)
                .map((Receipt receipt) -> new Ack(receipt.eventId(), receipt.duplicate()));
    }
}
