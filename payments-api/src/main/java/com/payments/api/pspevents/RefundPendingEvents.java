package com.payments.api.pspevents;

import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** A refund the PSP still works on: nothing to do, unless it is not ours. */
@ApplicationScoped
class RefundPendingEvents implements PspEventHandler {
    private final PspEventRepository events;
    private final PspEventItems items;

    public RefundPendingEvents(PspEventRepository events, PspEventItems items) {
        this.events = events;
        this.items = items;
    }

    @Override
    public Uni<String> apply(SqlClient conn, PspEvent event) {
        UUID refundId = PspEventItems.uuid(event.refundId());
        if (refundId == null) {
            return items.unknownSubject(conn, event, "unknown_refund");
        }
        return events.lockRefund(conn, refundId)
                .flatMap(refund -> refund != null
                        ? Uni.createFrom().item("no_change")
                        : items.unknownSubject(conn, event, "unknown_refund"));
    }
}
