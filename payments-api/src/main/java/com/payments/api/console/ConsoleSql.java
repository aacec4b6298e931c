package com.payments.api.console;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** The one way the console's repositories read: a prepared statement's rows, each mapped. */
final class ConsoleSql {
    private ConsoleSql() {}

    static <T> Uni<List<T>> list(Pool pool, String sql, Tuple args, Function<Row, T> mapper) {
        return pool.preparedQuery(sql).execute(args).map(rows -> {
            List<T> out = new ArrayList<>(rows.size());
            rows.forEach(row -> out.add(mapper.apply(row)));
            return out;
        });
    }

    /** The first row mapped, or null when there is none. */
    static <T> Uni<T> first(Pool pool, String sql, Tuple args, Function<Row, T> mapper) {
        return list(pool, sql, args, mapper).map(rows -> rows.isEmpty() ? null : rows.get(0));
    }
}
