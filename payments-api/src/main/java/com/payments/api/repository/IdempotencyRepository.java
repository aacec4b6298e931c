package com.payments.api.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Arrays;
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

    /** INSERT ... ON CONFLICT DO NOTHING: true when this call claimed the key. */
    public Uni<Boolean> insert(
            SqlClient client, UUID merchantId, String key, byte[] requestHash, String resourceType, UUID resourceId) {
        return client.preparedQuery(
                        """
                        INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
                        VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING""")
                .execute(Tuple.of(
                        merchantId, key, io.vertx.core.buffer.Buffer.buffer(requestHash), resourceType, resourceId))
                .map(rows -> rows.rowCount() == 1);
    }

    public Uni<StoredKey> find(SqlClient client, UUID merchantId, String key) {
        return client.preparedQuery(
                        """
                        SELECT request_hash, status, resource_type, resource_id, response_status, response_body
                          FROM idempotency_keys WHERE merchant_id = $1 AND key = $2""")
                .execute(Tuple.of(merchantId, key))
                .map(rows -> rows.rowCount() == 0 ? null : from(rows.iterator().next()));
    }

    /** Completes the in-progress key of a resource with its response; false when there was none in progress. */
    public Uni<Boolean> complete(SqlClient client, String resourceType, UUID resourceId, int status, byte[] body) {
        return client.preparedQuery(
                        """
                        UPDATE idempotency_keys
                           SET status = 'COMPLETED', response_status = $3, response_body = $4, completed_at = now()
                         WHERE resource_type = $1 AND resource_id = $2 AND status = 'IN_PROGRESS'""")
                .execute(Tuple.of(resourceType, resourceId, status, io.vertx.core.buffer.Buffer.buffer(body)))
                .map(rows -> rows.rowCount() > 0);
    }

    /** Deletes an in-progress key that belongs to this resource (the call it guarded never reached the PSP). */
    public Uni<Boolean> release(SqlClient client, UUID merchantId, String key, UUID resourceId) {
        return client.preparedQuery(
                        """
                        DELETE FROM idempotency_keys
                         WHERE merchant_id = $1 AND key = $2 AND resource_id = $3 AND status = 'IN_PROGRESS'""")
                .execute(Tuple.of(merchantId, key, resourceId))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Deletes up to {@code limit} COMPLETED keys created before now - retention; returns how many. */
    public Uni<Integer> deleteExpired(SqlClient client, Duration retention, int limit) {
        return client.preparedQuery(
                        """
                        DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
                            SELECT ctid FROM idempotency_keys
                             WHERE created_at < now() - make_interval(secs => $1) AND status = 'COMPLETED'
                             LIMIT $2 FOR UPDATE SKIP LOCKED))""")
                .execute(Tuple.of((double) retention.toSeconds(), limit))
                .map(rows -> rows.rowCount());
    }

    private static StoredKey from(Row row) {
        Buffer body = row.getBuffer("response_body");
        return new StoredKey(
                row.getBuffer("request_hash").getBytes(),
                "COMPLETED".equals(row.getString("status")),
                row.getString("resource_type"),
                row.getUUID("resource_id"),
                row.getInteger("response_status"),
                body == null ? null : body.getBytes());
    }

    static boolean sameHash(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }
}
