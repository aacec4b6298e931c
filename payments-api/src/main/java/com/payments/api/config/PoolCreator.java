package com.payments.api.config;

import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnectOptions;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;

/**
 * The pool as configured in application.properties, with a larger SQL limit for the pg client's prepared-statement
 * cache, which Quarkus does not expose. A statement longer than the client's default (2,048 characters) is not
 * cached: PostgreSQL parses and plans it again on every execution. The capture path's outcome statement is longer.
 */
@Singleton
public class PoolCreator implements PgPoolCreator {
    static final int PREPARED_STATEMENT_SQL_LIMIT = 16_384;

    @Override
    public Pool create(Input input) {
        List<SqlConnectOptions> servers = new ArrayList<>();
        for (PgConnectOptions options : input.pgConnectOptionsList()) {
            servers.add(options.setPreparedStatementCacheSqlLimit(PREPARED_STATEMENT_SQL_LIMIT));
        }
        return PgBuilder.pool()
                .with(input.poolOptions())
                .connectingTo(servers)
                .using(input.vertx())
                .build();
    }
}
