package com.payments.api.common;

import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One page of a merchant's list (docs/api.md "Lists"): at most {@code limit} rows, newest first, after the row
 * {@code startingAfter} or before the row {@code endingBefore} (the id of one of the merchant's rows of that list;
 * at most one of the two). Rows are ordered by {@code (created_at, id)}, which never changes for a row: paging
 * through never shows a row twice and misses none that existed when paging began, whatever is inserted meanwhile.
 */
public record Page(int limit, UUID startingAfter, UUID endingBefore) {
    public static final int MAX_LIMIT = 100;
    /** As many as {@code GET /v1/payments?orderId=} answered before it was paginated (API 1.2). */
    public static final int DEFAULT_LIMIT = 100;

    private static final Pattern LIMIT = Pattern.compile("[0-9]{1,3}");
    private static final Pattern ID =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /** A page's rows in list order and whether more follow in the direction of travel. */
    public record Slice<T>(List<T> data, boolean hasMore) {}

    /**
     * The query parameters as sent (null: not sent; an empty value is sent, and refused). Refused {@code invalid_limit} (not an integer from 1 to 100) or
     * {@code invalid_cursor} (not an id, or both cursors).
     */
    public static Page of(HttpServerRequest request) {
        return of(request.getParam("limit"), request.getParam("starting_after"), request.getParam("ending_before"));
    }

    static Page of(String limit, String startingAfter, String endingBefore) {
        if (startingAfter != null && endingBefore != null) {
            throw Refusal.invalid("invalid_cursor", "Send at most one of starting_after and ending_before");
        }
        return new Page(limit(limit), cursor(startingAfter, "starting_after"), cursor(endingBefore, "ending_before"));
    }

    private static int limit(String limit) {
        if (limit == null) {
            return DEFAULT_LIMIT;
        }
        int value = LIMIT.matcher(limit).matches() ? Integer.parseInt(limit) : 0;
        if (value < 1 || value > MAX_LIMIT) {
            throw Refusal.invalid("invalid_limit", "limit must be an integer from 1 to " + MAX_LIMIT);
        }
        return value;
    }

    private static UUID cursor(String value, String name) {
        return value == null ? null : id(value, "invalid_cursor", name + " must be the id of an item of this list");
    }

    /** A query parameter that must be an id (a UUID in its 36-character form); refused with {@code code} if not. */
    public static UUID id(String value, String code, String detail) {
        if (!ID.matcher(value).matches()) {
            throw Refusal.invalid(code, detail);
        }
        return UUID.fromString(value);
    }

    private UUID cursor() {
        return startingAfter != null ? startingAfter : endingBefore;
    }

    /**
     * Reads the page of {@code table}'s rows of {@code merchantId} (and {@code filterColumn = filter} when the filter
     * is not null, and created from {@code createdFrom} on when that is not null) in one statement: the cursor row's position and the rows beyond it, one more than the limit to
     * learn whether more follow. A cursor that is no row of the merchant in {@code table} is refused {@code
     * invalid_cursor}. Every variant is its own statement text, so each gets its own (generic) plan on the index
     * {@code (merchant_id[, filter], created_at, id)}.
     */
    public <T> Uni<Slice<T>> read(
            SqlClient client,
            String table,
            String columns,
            UUID merchantId,
            String filterColumn,
            Object filter,
            Instant createdFrom,
            Function<Row, T> mapper) {
        return read(client, table, columns, merchantId, null, filterColumn, filter, createdFrom, mapper);
    }

    /**
     * {@link #read} of the rows that also meet {@code condition} (SQL of ours on the row {@code t}, never request
     * text; null: none), such as the predicate of a partial index; a cursor row must meet it too.
     */
    public <T> Uni<Slice<T>> read(
            SqlClient client,
            String table,
            String columns,
            UUID merchantId,
            String condition,
            String filterColumn,
            Object filter,
            Instant createdFrom,
            Function<Row, T> mapper) {
        boolean backwards = endingBefore != null;
        List<Object> params = new ArrayList<>(List.of(merchantId, limit + 1));
        String filterSql = condition == null ? "" : " AND " + condition;
        if (filter != null) {
            params.add(filter);
            filterSql += " AND t.%s = $%d".formatted(filterColumn, params.size());
        }
        if (createdFrom != null) {
            params.add(OffsetDateTime.ofInstant(createdFrom, ZoneOffset.UTC));
            filterSql += " AND t.created_at >= $%d".formatted(params.size());
        }
        String qualified =
                Arrays.stream(columns.split(",\\s*")).map(c -> "t." + c).collect(Collectors.joining(", "));
        String sql;
        if (cursor() == null) {
            sql =
                    """
                    SELECT true AS cursor_found, %s FROM %s t WHERE t.merchant_id = $1%s
                     ORDER BY t.created_at DESC, t.id DESC LIMIT $2"""
                            .formatted(qualified, table, filterSql);
        } else {
            params.add(cursor());
            // The cursor row's created_at as a value the index scan compares with: joined to the cursor row
            // instead, the planner scanned the merchant's rows from the newest and filtered (EXPLAIN, docs/api.md).
            sql =
                    """
                    SELECT c.at IS NOT NULL AS cursor_found, page.*
                      FROM (SELECT (SELECT created_at FROM %2$s t WHERE t.id = $%4$d AND t.merchant_id = $1%7$s) AS at) c
                      LEFT JOIN LATERAL (
                        SELECT %1$s FROM %2$s t
                         WHERE t.merchant_id = $1%3$s AND (t.created_at, t.id) %5$s (c.at, $%4$d)
                         ORDER BY t.created_at %6$s, t.id %6$s LIMIT $2) page ON true"""
                            .formatted(
                                    qualified,
                                    table,
                                    filterSql,
                                    params.size(),
                                    backwards ? ">" : "<",
                                    backwards ? "ASC" : "DESC",
                                    condition == null ? "" : " AND " + condition);
        }
        return client.preparedQuery(sql).execute(Tuple.from(params)).map(rows -> slice(rows, backwards, mapper));
    }

    private <T> Slice<T> slice(RowSet<Row> rows, boolean backwards, Function<Row, T> mapper) {
        List<T> data = new ArrayList<>();
        boolean found = true;
        for (Row row : rows) {
            found = row.getBoolean("cursor_found");
            if (row.getValue("id") != null) {
                data.add(mapper.apply(row));
            }
        }
        if (!found) {
            throw Refusal.invalid(
                    "invalid_cursor",
                    (startingAfter != null ? "starting_after" : "ending_before")
                            + " must be the id of an item of this list");
        }
        boolean hasMore = data.size() > limit;
        if (hasMore) {
            data.remove(data.size() - 1);
        }
        if (backwards) {
            Collections.reverse(data);
        }
        return new Slice<>(data, hasMore);
    }
}
