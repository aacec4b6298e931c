package com.payments.api.pspevents;

import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;

/** The handling of one kind of PSP event. */
interface PspEventHandler {
    String ACTOR = "webhook";

    /** Applies the event in the transaction that stored it; answers the outcome stored with it. */
    Uni<String> apply(SqlClient conn, PspEvent event);

    /** The outcome of an event whose copy was stored before: nothing was applied. */
    String DUPLICATE = "duplicate";

    /**
     * Before any transaction: stores the event and does what it asks in one statement, without a transaction block,
     * when its subject agrees with it: already in the final state the event names (a capture's own charge.succeeded,
     * docs/capacity.md), stored as processed with the outcome {@code no_change}, no row lock and no update; for a
     * refund, also PENDING, settled by the same statement. Answers the outcome stored, {@link #DUPLICATE} when a copy
     * was stored before, or a null item: the event goes the whole way ({@link #apply}).
     */
    default Uni<String> storeInOneStatement(SqlClient client, PspEvent event, String payload) {
        return Uni.createFrom().nullItem();
    }
}
