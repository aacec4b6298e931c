package com.payments.api.pspevents;

import com.payments.api.resolver.ResolverMetrics;
import com.payments.psp.port.PspEvent;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * PSP webhooks (docs/resolver.md, docs/stripe.md): {@link PspEventVerifier} checks the delivery (refused, nothing
 * stored). An event whose subject agrees with it (already in the final state it names; a refund also PENDING) is
 * stored, and applied, in one statement; any other is stored once by id and applied as a hint through the state
 * machines by the handler of its kind ({@link PspEventDispatcher}), in one transaction. Never backwards: an event
 * that contradicts a final state opens an operations item and changes no money.
 */
@ApplicationScoped
public class PspEventService {

    /** What happened to a delivery. */
    public record Receipt(String eventId, boolean duplicate, String outcome) {}

    private final Pool pool;
    private final PspEventVerifier verifier;
    private final PspEventRepository events;
    private final PspEventDispatcher dispatcher;
    private final ResolverMetrics metrics;

    public PspEventService(
            Pool pool,
            PspEventVerifier verifier,
            PspEventRepository events,
            PspEventDispatcher dispatcher,
            ResolverMetrics metrics) {
        this.pool = pool;
        this.verifier = verifier;
        this.events = events;
        this.dispatcher = dispatcher;
        this.metrics = metrics;
    }

    /**
     * One delivery to the route of {@code provider} ({@code sandbox}: {@code Psp-Signature}; {@code stripe}:
     * {@code Stripe-Signature}).
     *
     * @param header the request's header of a name, null when absent
     */
    public Uni<Receipt> receive(String provider, byte[] body, Function<String, String> header) {
        PspEvent event = verifier.verify(provider, body, header);
        String payload = new String(body, StandardCharsets.UTF_8);
        return dispatcher
                .storeInOneStatement(pool, event, payload)
                .flatMap(outcome -> outcome != null
                        ? Uni.createFrom()
                                .item(new Receipt(event.eventId(), outcome.equals(PspEventHandler.DUPLICATE), outcome))
                        : storeAndApply(event, payload))
                .invoke(receipt -> {
                    metrics.webhook(receipt.outcome());
                    Log.infof("Webhook %s %s: %s", receipt.eventId(), event.providerType(), receipt.outcome());
                });
    }

    /** Stores the event once by its id, applies it and stores its outcome, in one transaction. */
    private Uni<Receipt> storeAndApply(PspEvent event, String payload) {
        return pool.withTransaction(conn -> events.insert(conn, event.eventId(), event.providerType(), payload)
                .flatMap(stored -> !stored
                        ? Uni.createFrom().item(new Receipt(event.eventId(), true, PspEventHandler.DUPLICATE))
                        : dispatcher.apply(conn, event).flatMap(outcome -> events.processed(
                                        conn, event.eventId(), outcome)
                                .replaceWith(new Receipt(event.eventId(), false, outcome)))));
    }
}
