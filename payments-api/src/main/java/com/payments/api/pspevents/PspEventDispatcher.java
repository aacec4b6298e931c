package com.payments.api.pspevents;

import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/** Which handler takes a PSP event, by its PSP-neutral type (docs/resolver.md, "Applying"). */
@ApplicationScoped
public class PspEventDispatcher {
    private static final PspEventHandler IGNORED =
            (conn, event) -> Uni.createFrom().item("ignored");

    private final ChargeEvents charges;
    private final RefundEvents refunds;
    private final RefundPendingEvents pendingRefunds;
    private final DisputeEvents disputes;

    public PspEventDispatcher(
            ChargeEvents charges, RefundEvents refunds, RefundPendingEvents pendingRefunds, DisputeEvents disputes) {
        this.charges = charges;
        this.refunds = refunds;
        this.pendingRefunds = pendingRefunds;
        this.disputes = disputes;
    }

    Uni<String> storeInOneStatement(SqlClient client, PspEvent event, String payload) {
        return handler(event).storeInOneStatement(client, event, payload);
    }

    Uni<String> apply(SqlClient conn, PspEvent event) {
        return handler(event).apply(conn, event);
    }

    private PspEventHandler handler(PspEvent event) {
        return switch (event.type()) {
            case CHARGE_SUCCEEDED, CHARGE_FAILED -> charges;
            case REFUND_SUCCEEDED, REFUND_FAILED -> refunds;
            case REFUND_PENDING -> pendingRefunds;
            case DISPUTE_CREATED -> disputes;
            case IGNORED -> IGNORED;
        };
    }
}
