package com.payments.api.config;

import com.payments.contracts.sql.PreparedStatementPool;
import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.sqlclient.Pool;
import jakarta.inject.Singleton;

/** The pool whose prepared-statement cache keeps the capture path's long statements ({@link PreparedStatementPool}). */
@Singleton
public class PoolCreator implements PgPoolCreator {
    @Override
    public Pool create(Input input) {
        return PreparedStatementPool.create(input);
    }
}
