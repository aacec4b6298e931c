package com.payments.api.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.UUID;

/** SQL on idempotency_keys (primary key merchant_id + key). */
@ApplicationScoped
public class IdempotencyRepository {

    /** A stored key as read back after a lost claim. */
    public record StoredKey(
            byte[] requestHash,
            boolean completed,
            String resourceType,
            UUID resourceId,
            Integer responseStatus,
            byte[] responseBody) {}

    /** The columns {@link #storedKey} reads (of idempotency_keys aliased {@code k}). */
    public static final String KEY_COLUMNS =
            "k.request_hash, k.status, k.resource_type, k.resource_id, k.response_status, k.response_body";

    /**
     * Reads a used key back for a request with hash {@code requestHash} and, in the same statement, records that use
     * in {@code idempotency_replays} (the console's story): replayed, in progress (409) or a different request (422),
     * as {@code IdempotencyService.classify} answers it.
     */
    public Uni<StoredKey> find(SqlClient client, UUID merchantId, String key, byte[] requestHash) {
        return client.preparedQuery(
                        """
                        WITH k AS (SELECT * FROM idempotency_keys WHERE merchant_id = $1 AND key = $2),
                        replay AS (
                            INSERT INTO idempotency_replays (merchant_id, key, resource_id, answer, response_status)
                            SELECT merchant_id, key, resource_id,
                                   CASE WHEN request_hash <> $3 THEN 'different_request'
                                        WHEN status = 'COMPLETED' THEN 'replayed' ELSE 'in_progress' END,
                                   CASE WHEN request_hash = $3 THEN response_status END
                              FROM k)
                        SELECT %s FROM k"""
                                .formatted(KEY_COLUMNS))
                .execute(Tuple.of(merchantId, key, io.vertx.core.buffer.Buffer.buffer(requestHash)))
                .map(rows ->
                        rows.rowCount() == 0 ? null : storedKey(rows.iterator().next()));
    }

    /** Reads a key as it is stored, recording nothing; null when the merchant has no such key. */
    public Uni<StoredKey> read(SqlClient client, UUID merchantId, String key) {
        return client.preparedQuery("SELECT %s FROM idempotency_keys k WHERE k.merchant_id = $1 AND k.key = $2"
                        .formatted(KEY_COLUMNS))
                .execute(Tuple.of(merchantId, key))
                .map(rows ->
                        rows.rowCount() == 0 ? null : storedKey(rows.iterator().next()));
    }

    /**
     * Completes the in-progress key of a resource with its response; false when there was none in progress.
     * {@code finalOutcome}: the resource is final (its key's retention starts now, docs/api.md).
     */
    public Uni<Boolean> complete(
            SqlClient client, String resourceType, UUID resourceId, int status, byte[] body, boolean finalOutcome) {
        return client.preparedQuery(
                        """
                        UPDATE idempotency_keys
                           SET status = 'COMPLETED', response_status = $3, response_body = $4, completed_at = now(),
                               final_at = CASE WHEN $5 THEN now() END
                         WHERE resource_type = $1 AND resource_id = $2 AND status = 'IN_PROGRESS' AND final_at IS NULL""")
                .execute(Tuple.of(
                        resourceType, resourceId, status, io.vertx.core.buffer.Buffer.buffer(body), finalOutcome))
                .map(rows -> rows.rowCount() > 0);
    }

    /**
     * Deletes up to {@code limit} keys whose payment or refund has been final for longer than the retention (a
     * key whose resource is not final has no {@code final_at} and stays), with their recorded replays; returns how
     * many keys. Oldest first, through the index on final_at: without the ORDER BY, the generic plan
     * (plan_cache_mode) scans the whole table.
     */
    public Uni<Integer> deleteExpired(SqlClient client, Duration retention, int limit) {
        return client.preparedQuery(
                        """
                        WITH purged AS (
                            DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
                                SELECT ctid FROM idempotency_keys
                                 WHERE final_at < now() - make_interval(secs => $1)
                                 ORDER BY final_at LIMIT $2 FOR UPDATE SKIP LOCKED))
                            RETURNING resource_id),
                        replays AS (
                            DELETE FROM idempotency_replays r USING purged WHERE r.resource_id = purged.resource_id)
                        SELECT count(*) FROM purged""")
                .execute(Tuple.of((double) retention.toSeconds(), limit))
                .map(rows -> (int) rows.iterator().next().getLong(0).longValue());
    }

    /** The key in a row of {@link #KEY_COLUMNS}; null when the row has none (a LEFT JOIN that found no key). */
    public static StoredKey storedKey(Row row) {
        Buffer hash = row.getBuffer("request_hash");
        if (hash == null) {
            return null;
        }
        Buffer body = row.getBuffer("response_body");
        return new StoredKey(
                hash.getBytes(),
                "COMPLETED".equals(row.getString("status")),
                row.getString("resource_type"),
                row.getUUID("resource_id"),
                row.getInteger("response_status"),
                body == null ? null : body.getBytes());
    }

    /** True for the failure of a statement that tried to store a key the merchant already has. */
    public static boolean isKeyTaken(Throwable failure) {
        return failure instanceof PgException pg
                && "23505".equals(pg.getSqlState())
                && "idempotency_keys_pkey".equals(pg.getConstraint());
    }
}
