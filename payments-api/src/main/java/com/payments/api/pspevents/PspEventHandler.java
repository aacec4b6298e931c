package com.payments.api.pspevents;

import com.payments.psp.port.PspEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;

/** The handling of one kind of PSP event. */
interface PspEventHandler {
    String ACTOR = "webhook";

    /** Applies the event in the transaction that stored it; answers the outcome stored with it. */
    Uni<String> apply(SqlClient conn, PspEvent event);
}
