package com.payments.relay.config;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnectOptions;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The pool as configured, with the relay's keepalive settings ({@link RelayConfig#keepalive()}) on every connection,
 * as on the control connection, so that the pool sessions of a dead host end as soon as its lock session instead of
 * occupying server connections for hours.
 */
@Singleton
public class RelayPoolCreator implements PgPoolCreator {
    private final RelayConfig config;

    RelayPoolCreator(RelayConfig config) {
        this.config = config;
    }

    @Override
    public Pool create(Input input) {
        List<SqlConnectOptions> servers = new ArrayList<>();
        for (PgConnectOptions options : input.pgConnectOptionsList()) {
            servers.add(withKeepalive(options, config.keepalive()));
        }
        return PgBuilder.pool()
                .with(input.poolOptions())
                .connectingTo(servers)
                .using(input.vertx())
                .build();
    }

    /**
     * Keepalive on the socket, and the server-side dead-peer settings as session parameters of the startup message
     * (PostgreSQL applies any settable parameter sent there, and refuses the connection for one it does not know:
     * {@code client_connection_check_interval} is new in PostgreSQL 14, so it is only sent when not 0). The server
     * side is what matters: it frees the lock of a dead publisher. On the client, Vert.x 4.5 takes the keepalive timers from the operating system and applies
     * TCP_USER_TIMEOUT only with the native transport, so the relay bounds its own waits (see RelayWorker).
     */
    public static PgConnectOptions withKeepalive(PgConnectOptions options, RelayConfig.Keepalive keepalive) {
        options.setTcpKeepAlive(true)
                .addProperty("tcp_keepalives_idle", seconds(keepalive.idle()))
                .addProperty("tcp_keepalives_interval", seconds(keepalive.interval()))
                .addProperty("tcp_keepalives_count", Integer.toString(keepalive.count()))
                .addProperty(
                        "tcp_user_timeout",
                        Long.toString(keepalive.userTimeout().toMillis()));
        long checkMillis = keepalive.connectionCheckInterval().toMillis();
        if (checkMillis > 0) {
            // Keepalive makes the kernel end the socket; this makes a backend that is inside a statement see it.
            options.addProperty("client_connection_check_interval", Long.toString(checkMillis));
        }
        return options;
    }

    /** Whole seconds, at least 1 (0 would mean the operating system's default, 2 hours). */
    private static String seconds(Duration duration) {
        return Long.toString(Math.max(1, duration.toSeconds()));
    }
}
