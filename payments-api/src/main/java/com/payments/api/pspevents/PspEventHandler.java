package com.payments.api.pspevents;

import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;

/** The handling of one kind of PSP event. */
interface PspEventHandler {
    String ACTOR = "webhook";

    /** Applies the event in the transaction that stored it; answers the outcome stored with it. */
    Uni<String> apply(SqlClient conn, PspEvent event);

    /**
     * Before any transaction: stores the event as processed with the outcome {@code no_change}, in one statement and
     * without an update or a row lock, when its subject is already in the final state the event names (a capture's own
     * charge.succeeded, docs/capacity.md). True: stored now; false: a copy was stored before; a null item: the event
     * may change something, so it goes the whole way ({@link #apply}).
     */
    default Uni<Boolean> storeIfSettled(SqlClient client, PspEvent event, String payload) {
        return Uni.createFrom().nullItem();
    }
}
