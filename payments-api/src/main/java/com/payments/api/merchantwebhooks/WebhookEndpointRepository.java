package com.payments.api.merchantwebhooks;

import com.payments.api.common.Page;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** SQL on webhook_endpoints, their secrets and deliveries (V90). */
@ApplicationScoped
public class WebhookEndpointRepository {

    /** The first key of the advisory locks of merchants' endpoint registrations (issue 24); the second: the merchant. */
    static final int REGISTRATION_LOCK = 24;

    /**
     * Serialises the merchant's registrations until the transaction ends, so that the endpoint count read by {@link
     * #insert} afterwards, in the same transaction, cannot race another one. An advisory lock: a row lock on
     * {@code merchants} would need UPDATE on it, which the application role does not have (V79).
     */
    public Uni<Void> lockMerchant(SqlClient conn, UUID merchantId) {
        return conn.preparedQuery("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                .execute(Tuple.of(REGISTRATION_LOCK, merchantId.toString()))
                .replaceWithVoid();
    }

    /**
     * Stores the endpoint with its sealed secret (row {@code secretId}) unless the merchant has {@code max} live
     * endpoints; null when it has.
     */
    public Uni<WebhookEndpointView> insert(
            SqlClient conn,
            UUID id,
            UUID merchantId,
            WebhookEndpointRequest request,
            UUID secretId,
            WebhookSecretCipher.Sealed secret,
            int max) {
        return conn.preparedQuery(
                        """
                        WITH endpoint AS (
                            INSERT INTO webhook_endpoints (id, merchant_id, url, event_types)
                            SELECT $1, $2, $3, $4
                             WHERE (SELECT count(*) FROM webhook_endpoints
                                     WHERE merchant_id = $2 AND status <> 'DELETED') < $5
                            RETURNING %s),
                        secret AS (
                            INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext)
                            SELECT $6, id, $7, $8 FROM endpoint)
                        SELECT * FROM endpoint"""
                                .formatted(WebhookEndpointView.COLUMNS))
                .execute(Tuple.from(List.of(
                        id,
                        merchantId,
                        request.url(),
                        request.events().toArray(String[]::new),
                        max,
                        secretId,
                        secret.keyId(),
                        Buffer.buffer(secret.ciphertext()))))
                .map(WebhookEndpointRepository::first);
    }

    /** The merchant's endpoint of that id, deleted ones included; null when it has none. */
    public Uni<WebhookEndpointView> find(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery("SELECT %s FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2"
                        .formatted(WebhookEndpointView.COLUMNS))
                .execute(Tuple.of(id, merchantId))
                .map(WebhookEndpointRepository::first);
    }

    /** {@link #find} with the endpoint's row lock, for a rotation. */
    public Uni<WebhookEndpointView> findForUpdate(SqlClient conn, UUID merchantId, UUID id) {
        return conn.preparedQuery("SELECT %s FROM webhook_endpoints WHERE id = $1 AND merchant_id = $2 FOR UPDATE"
                        .formatted(WebhookEndpointView.COLUMNS))
                .execute(Tuple.of(id, merchantId))
                .map(WebhookEndpointRepository::first);
    }

    /** A page of the merchant's endpoints that are not deleted, newest first. */
    public Uni<Page.Slice<WebhookEndpointView>> page(SqlClient client, UUID merchantId, Page page) {
        return page.read(
                client,
                "webhook_endpoints",
                WebhookEndpointView.COLUMNS,
                merchantId,
                "t.status <> 'DELETED'",
                null,
                null,
                null,
                WebhookEndpointView::of);
    }

    /**
     * Marks the endpoint DELETED (again: no change), fails its pending deliveries and deletes its secrets, in one
     * statement; null when the merchant has no such endpoint.
     */
    public Uni<WebhookEndpointView> delete(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery(
                        """
                        WITH endpoint AS (
                            UPDATE webhook_endpoints
                               SET status = 'DELETED', disabled_reason = NULL,
                                   updated_at = CASE WHEN status = 'DELETED' THEN updated_at ELSE now() END
                             WHERE id = $1 AND merchant_id = $2
                            RETURNING %s),
                        failed AS (
                            UPDATE webhook_deliveries SET status = 'FAILED', next_attempt_at = NULL, updated_at = now()
                             WHERE endpoint_id IN (SELECT id FROM endpoint) AND status = 'PENDING'),
                        secrets AS (
                            DELETE FROM webhook_endpoint_secrets WHERE endpoint_id IN (SELECT id FROM endpoint))
                        SELECT * FROM endpoint"""
                                .formatted(WebhookEndpointView.COLUMNS))
                .execute(Tuple.of(id, merchantId))
                .map(WebhookEndpointRepository::first);
    }

    /** ENABLED again (and no longer failing) unless deleted; null when it is deleted or not the merchant's. */
    public Uni<WebhookEndpointView> enable(SqlClient client, UUID merchantId, UUID id) {
        return client.preparedQuery(
                        """
                        UPDATE webhook_endpoints
                           SET status = 'ENABLED', disabled_reason = NULL, failing_since = NULL, updated_at = now()
                         WHERE id = $1 AND merchant_id = $2 AND status <> 'DELETED'
                        RETURNING %s"""
                                .formatted(WebhookEndpointView.COLUMNS))
                .execute(Tuple.of(id, merchantId))
                .map(WebhookEndpointRepository::first);
    }

    /**
     * Ends the current secret's life at now + {@code grace} (and drops the secrets already expired). Run under the
     * endpoint's row lock ({@link #findForUpdate}) and before {@link #addCurrentSecret}: two statements, because the
     * unique index of the current secret is checked row by row.
     */
    public Uni<Void> retireCurrentSecret(SqlClient conn, UUID endpointId, Duration grace) {
        return conn.preparedQuery(
                        """
                        WITH expired AS (
                            DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND expires_at <= now())
                        UPDATE webhook_endpoint_secrets SET expires_at = now() + make_interval(secs => $2)
                         WHERE endpoint_id = $1 AND expires_at IS NULL""")
                .execute(Tuple.of(endpointId, grace.toMillis() / 1000.0))
                .replaceWithVoid();
    }

    public Uni<Void> addCurrentSecret(
            SqlClient conn, UUID endpointId, UUID secretId, WebhookSecretCipher.Sealed secret) {
        return conn.preparedQuery(
                        "INSERT INTO webhook_endpoint_secrets (id, endpoint_id, key_id, ciphertext) VALUES ($1, $2, $3, $4)")
                .execute(Tuple.of(secretId, endpointId, secret.keyId(), Buffer.buffer(secret.ciphertext())))
                .replaceWithVoid();
    }

    /** A secret row as stored: plaintext (written before V94) or sealed. */
    public record StoredSecret(UUID id, UUID endpointId, String plaintext, String keyId, byte[] ciphertext) {}

    /**
     * Locks (SKIP LOCKED: another replica's batch is left to it) up to {@code limit} secret rows after {@code after},
     * in id order, that are in plaintext or sealed under another key than {@code currentKeyId}.
     */
    public Uni<List<StoredSecret>> lockUnsealed(SqlClient conn, String currentKeyId, UUID after, int limit) {
        return conn.preparedQuery(
                        """
                        SELECT id, endpoint_id, secret, key_id, ciphertext FROM webhook_endpoint_secrets
                         WHERE key_id IS DISTINCT FROM $1 AND id > $2
                         ORDER BY id
                         LIMIT $3
                           FOR UPDATE SKIP LOCKED""")
                .execute(Tuple.of(currentKeyId, after, limit))
                .map(rows -> {
                    List<StoredSecret> secrets = new ArrayList<>();
                    for (Row row : rows) {
                        io.vertx.mutiny.core.buffer.Buffer ciphertext = row.getBuffer("ciphertext");
                        secrets.add(new StoredSecret(
                                row.getUUID("id"),
                                row.getUUID("endpoint_id"),
                                row.getString("secret"),
                                row.getString("key_id"),
                                ciphertext == null ? null : ciphertext.getBytes()));
                    }
                    return secrets;
                });
    }

    /** Replaces the rows' plaintext or old ciphertext by the sealed one; the rows are locked by {@link #lockUnsealed}. */
    public Uni<Integer> reseal(SqlClient conn, List<UUID> ids, List<WebhookSecretCipher.Sealed> sealed) {
        return conn.preparedQuery(
                        """
                        UPDATE webhook_endpoint_secrets s
                           SET key_id = u.key_id, ciphertext = u.ciphertext, secret = NULL
                          FROM unnest($1::uuid[], $2::text[], $3::bytea[]) AS u (id, key_id, ciphertext)
                         WHERE s.id = u.id""")
                .execute(Tuple.of(
                        ids.toArray(UUID[]::new),
                        sealed.stream().map(WebhookSecretCipher.Sealed::keyId).toArray(String[]::new),
                        sealed.stream().map(x -> Buffer.buffer(x.ciphertext())).toArray(Buffer[]::new)))
                .map(RowSet::rowCount);
    }

    /** A page of the endpoint's deliveries, newest first, with their event type and last attempt. */
    public Uni<Page.Slice<DeliveryView>> deliveries(SqlClient client, UUID merchantId, UUID endpointId, Page page) {
        return page.read(
                        client,
                        "webhook_deliveries",
                        DeliveryView.COLUMNS,
                        merchantId,
                        null,
                        "endpoint_id",
                        endpointId,
                        null,
                        DeliveryView::of)
                .flatMap(slice ->
                        withDetails(client, slice.data()).map(data -> new Page.Slice<>(data, slice.hasMore())));
    }

    /** The deliveries with their event's type (while it is in the feed) and their latest attempt. */
    private Uni<List<DeliveryView>> withDetails(SqlClient client, List<DeliveryView> deliveries) {
        if (deliveries.isEmpty()) {
            return Uni.createFrom().item(deliveries);
        }
        return client.preparedQuery(
                        """
                        SELECT d.id AS delivery_id, ev.type AS event_type, a.*
                          FROM webhook_deliveries d
                          LEFT JOIN merchant_events ev ON ev.id = d.event_id AND ev.merchant_id = d.merchant_id
                          LEFT JOIN LATERAL (
                            SELECT attempt, started_at, latency_ms, response_code, outcome, error, next_attempt_at
                              FROM webhook_delivery_attempts WHERE delivery_id = d.id
                             ORDER BY attempt DESC LIMIT 1) a ON true
                         WHERE d.id = ANY ($1)""")
                .execute(Tuple.of(deliveries.stream().map(DeliveryView::id).toArray(UUID[]::new)))
                .map(rows -> {
                    Map<UUID, Row> details = new HashMap<>();
                    rows.forEach(row -> details.put(row.getUUID("delivery_id"), row));
                    List<DeliveryView> data = new ArrayList<>();
                    for (DeliveryView delivery : deliveries) {
                        Row row = details.get(delivery.id());
                        data.add(
                                row == null
                                        ? delivery
                                        : delivery.with(row.getString("event_type"), DeliveryAttemptView.of(row)));
                    }
                    return data;
                });
    }

    /**
     * One PENDING {@code redeliver} delivery of the event, due now, for each ENABLED endpoint of the merchant that
     * receives its type (only {@code endpointId} when it is not null); the deliveries created.
     */
    public Uni<List<DeliveryView>> redeliver(
            SqlClient client, UUID merchantId, UUID eventId, String eventType, UUID endpointId) {
        return client.preparedQuery(
                        """
                        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, merchant_id, origin, next_attempt_at)
                        SELECT gen_random_uuid(), e.id, $1, $2, 'redeliver', now()
                          FROM webhook_endpoints e
                         WHERE e.merchant_id = $2 AND e.status = 'ENABLED'
                           AND ($3 = ANY (e.event_types) OR '*' = ANY (e.event_types))
                           AND ($4::uuid IS NULL OR e.id = $4)
                        RETURNING %s"""
                                .formatted(DeliveryView.COLUMNS))
                .execute(Tuple.of(eventId, merchantId, eventType, endpointId))
                .map(rows -> {
                    List<DeliveryView> created = new ArrayList<>();
                    rows.forEach(row -> created.add(DeliveryView.of(row).with(eventType, null)));
                    return created;
                });
    }

    private static WebhookEndpointView first(RowSet<Row> rows) {
        return rows.size() == 0 ? null : WebhookEndpointView.of(rows.iterator().next());
    }
}
