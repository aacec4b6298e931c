package com.payments.contracts.sql;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnectOptions;
import java.util.ArrayList;
import java.util.List;

/**
 * The pool as configured in a service's application.properties, with a larger SQL limit for the pg client's
 * prepared-statement cache, which Quarkus does not expose. A statement longer than the client's default (2,048
 * characters) is not cached: PostgreSQL parses and plans it again on every execution. The capture path's outcome
 * statement and the refunds-worker's claim are longer. A service's {@link PgPoolCreator} bean returns this pool.
 */
public final class PreparedStatementPool {
    static final int SQL_LIMIT = 16_384;

    private PreparedStatementPool() {}

    public static Pool create(PgPoolCreator.Input input) {
        List<SqlConnectOptions> servers = new ArrayList<>();
        for (PgConnectOptions options : input.pgConnectOptionsList()) {
            servers.add(options.setPreparedStatementCacheSqlLimit(SQL_LIMIT));
        }
        return PgBuilder.pool()
                .with(input.poolOptions())
                .connectingTo(servers)
                .using(input.vertx())
                .build();
    }
}
