package com.payments.api.common;

import io.vertx.core.VertxException;
import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.net.SocketException;
import java.util.List;
import java.util.Set;

/**
 * Whether a failure means that no database takes writes right now, as during a failover (docs/operations.md,
 * "Database failover"): the session was cut or refused, the server is shutting down or starting, or it is a standby
 * (read only), or its connection was refused or reset ({@link SocketException}: a cut session may answer a statement
 * already on its way with a TCP reset instead of the server's error). Such a request is retried later with the same
 * Idempotency-Key: whatever it committed stays, and a key it claimed answers 409 until its payment is resolved. The PSP's
 * socket failures do not come here: a capture makes them an outcome (unknown) or a refusal (never sent).
 */
public final class DatabaseUnavailable {
    /** admin_shutdown, crash_shutdown, cannot_connect_now, read_only_sql_transaction; and class 08 (below). */
    private static final Set<String> STATES = Set.of("57P01", "57P02", "57P03", "25006");

    /**
     * How the SQL client fails a statement given to a session that is already closed (a pooled connection in the
     * moment between the server's cut and the pool's eviction, or a transaction's next statement after the cut), and
     * the statements it had queued but not sent: a bare {@link NoStackTraceThrowable} or {@link VertxException}
     * (vertx-sql-client 4.5, SocketConnectionBase), told apart by its text only (CutSessionTest holds it to it).
     * Nothing of such a statement reached the server.
     */
    private static final List<String> NOT_SENT = List.of(
            "Connection is not active now", "Pending requests failed to be sent due to connection has been closed");

    private DatabaseUnavailable() {}

    public static boolean causedBy(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof ClosedConnectionException || cause instanceof SocketException) {
                return true;
            }
            if ((cause instanceof NoStackTraceThrowable || cause instanceof VertxException)
                    && notSent(cause.getMessage())) {
                return true;
            }
            if (cause instanceof PgException pg
                    && pg.getSqlState() != null
                    && (pg.getSqlState().startsWith("08") || STATES.contains(pg.getSqlState()))) {
                return true;
            }
        }
        return false;
    }

    private static boolean notSent(String message) {
        return message != null && NOT_SENT.stream().anyMatch(message::startsWith);
    }
}
