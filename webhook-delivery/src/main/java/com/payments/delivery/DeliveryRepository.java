package com.payments.delivery;

import com.payments.contracts.SqlResource;
import com.payments.contracts.events.MerchantEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** {@code webhook_deliveries} and their attempts (V90): fan-out, leases, and each attempt's outcome. */
@ApplicationScoped
public class DeliveryRepository {
    private static final String LEASE = SqlResource.load(DeliveryRepository.class, "delivery-lease.sql");
    private static final String RECORD_SUCCEEDED =
            SqlResource.load(DeliveryRepository.class, "delivery-record-succeeded.sql");
    private final Pool pool;

    public DeliveryRepository(Pool pool) {
        this.pool = pool;
    }

    /** A {@code payment-events} record that can have webhooks. */
    public record Event(UUID id, UUID merchantId, String type) {}

    /**
     * One PENDING delivery of each event per ENABLED endpoint of its merchant subscribed to its type or to "*"; a
     * re-consumed event, or one twice in the batch, adds nothing (one 'event' delivery per endpoint and event). Returns how many were added.
     */
    public Uni<Integer> fanOut(List<Event> events) {
        return pool.preparedQuery(
                        """
                        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, merchant_id, origin, next_attempt_at)
                        SELECT gen_random_uuid(), e.id, v.id, e.merchant_id, 'event', now()
                          FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::uuid[], $3::text[])) AS v (id, merchant_id, type)
                          JOIN webhook_endpoints e
                            ON e.merchant_id = v.merchant_id AND e.status = 'ENABLED'
                           AND (v.type = ANY (e.event_types) OR '*' = ANY (e.event_types))
                        ON CONFLICT (endpoint_id, event_id) WHERE origin = 'event' DO NOTHING""")
                .execute(Tuple.of(
                        events.stream().map(Event::id).toArray(UUID[]::new),
                        events.stream().map(Event::merchantId).toArray(UUID[]::new),
                        events.stream().map(Event::type).toArray(String[]::new)))
                .map(RowSet::rowCount);
    }

    /** A leased delivery with what its attempt needs; {@code leasedUntil} guards its outcome. */
    public record Lease(
            UUID id,
            UUID endpointId,
            UUID eventId,
            int attempts,
            Instant createdAt,
            OffsetDateTime leasedUntil,
            String url,
            String endpointStatus,
            List<StoredSecret> secrets,
            MerchantEvent event) {}

    /**
     * An unexpired signing secret of the endpoint as stored: sealed ({@code keyId}, {@code ciphertext}; opened only
     * when signing, {@link WebhookSender}) or, before payments-api has sealed the row, {@code plaintext}.
     */
    public record StoredSecret(UUID id, String keyId, byte[] ciphertext, String plaintext) {}

    /**
     * Leases at most {@code limit} due deliveries, at most {@code perEndpoint} in flight per endpoint counting the
     * ones this instance already has ({@code inFlight}), fairly: every endpoint's oldest due delivery before any
     * endpoint's second. A leased delivery is due again after {@code lease} unless its outcome is written first (a
     * killed sender's deliveries come back).
     */
    public Uni<List<Lease>> lease(Map<UUID, Integer> inFlight, int perEndpoint, int limit, Duration lease) {
        UUID[] endpoints = inFlight.keySet().toArray(UUID[]::new);
        Integer[] counts = Arrays.stream(endpoints).map(inFlight::get).toArray(Integer[]::new);
        return pool.preparedQuery(LEASE)
                .execute(Tuple.of(endpoints, counts, perEndpoint, limit, lease.toMillis() / 1000.0))
                .map(rows -> {
                    List<Lease> leases = new ArrayList<>();
                    for (Row row : rows) {
                        leases.add(lease(row));
                    }
                    return leases;
                });
    }

    private static List<StoredSecret> secrets(Row row) {
        UUID[] ids = row.getArrayOfUUIDs("secret_ids");
        if (ids == null) {
            return List.of();
        }
        String[] keyIds = row.getArrayOfStrings("secret_key_ids");
        // the Mutiny Row has no getArrayOfBuffers
        Buffer[] ciphertexts = row.getDelegate().getArrayOfBuffers("secret_ciphertexts");
        String[] plaintexts = row.getArrayOfStrings("secret_plaintexts");
        List<StoredSecret> secrets = new ArrayList<>();
        for (int i = 0; i < ids.length; i++) {
            secrets.add(new StoredSecret(
                    ids[i], keyIds[i], ciphertexts[i] == null ? null : ciphertexts[i].getBytes(), plaintexts[i]));
        }
        return secrets;
    }

    private static Lease lease(Row row) {
        String payload = row.getString("payload");
        MerchantEvent event = payload == null
                ? null
                : new MerchantEvent(
                        row.getUUID("event_id"),
                        row.getString("event_type"),
                        row.getOffsetDateTime("event_created_at").toInstant(),
                        row.getLong("event_version"),
                        row.getString("event_payment"),
                        payload);
        return new Lease(
                row.getUUID("id"),
                row.getUUID("endpoint_id"),
                row.getUUID("event_id"),
                row.getInteger("attempts"),
                row.getOffsetDateTime("created_at").toInstant(),
                row.getOffsetDateTime("next_attempt_at"),
                row.getString("url"),
                row.getString("status"),
                secrets(row),
                event);
    }

    /** How one attempt ended: the receiver's status (null without an answer) and the error, if any. */
    public record Attempt(Instant startedAt, long latencyMs, Integer responseCode, boolean succeeded, String error) {}

    /**
     * Writes the attempt, the delivery's new state (SUCCEEDED; PENDING until {@code nextAttemptAt}; FAILED when that
     * is null) and the endpoint's health in one transaction, only while the lease is still this sender's. Returns
     * what happened, or {@link Outcome#STALE} when the lease had ended and another sender owns the delivery.
     */
    public Uni<Outcome> record(Lease lease, Attempt attempt, Instant nextAttemptAt, Duration disableAfter) {
        String status = attempt.succeeded() ? "SUCCEEDED" : nextAttemptAt == null ? "FAILED" : "PENDING";
        OffsetDateTime next = attempt.succeeded() || nextAttemptAt == null ? null : utc(nextAttemptAt);
        return pool.withTransaction(tx -> tx.preparedQuery(
                        """
                                UPDATE webhook_deliveries
                                   SET status = $3, attempts = attempts + 1, next_attempt_at = $4, updated_at = now()
                                 WHERE id = $1 AND status = 'PENDING' AND next_attempt_at = $2
                                RETURNING attempts""")
                .execute(Tuple.of(lease.id(), lease.leasedUntil(), status, next))
                .flatMap(updated -> {
                    if (updated.rowCount() == 0) {
                        return Uni.createFrom().item(Outcome.STALE);
                    }
                    int number = updated.iterator().next().getInteger(0);
                    return insertAttempt(tx, lease.id(), number, attempt, next)
                            .chain(() -> attempt.succeeded()
                                    ? healthy(tx, lease.endpointId())
                                    : failing(tx, lease.endpointId(), attempt.startedAt(), disableAfter))
                            .map(disabled -> Outcome.of(status, disabled));
                }));
    }

    /** A successful attempt of a leased delivery. */
    public record Success(Lease lease, Attempt attempt) {}

    /**
     * Writes successful attempts in one statement (through a {@link com.payments.contracts.sql.StatementBatcher}):
     * each delivery SUCCEEDED with its attempt row, and their endpoints' failing_since cleared, each only while its
     * lease is still this sender's. Answers, per input and in order, true when written and false when the lease had
     * ended ({@link Outcome#STALE}). A failed attempt takes {@link #record} instead (retry schedule, disabling).
     */
    public Uni<List<Boolean>> recordSucceeded(List<Success> successes) {
        return pool.preparedQuery(RECORD_SUCCEEDED)
                .execute(Tuple.of(
                        successes.stream().map(s -> s.lease().id()).toArray(UUID[]::new),
                        successes.stream().map(s -> s.lease().leasedUntil()).toArray(OffsetDateTime[]::new),
                        successes.stream()
                                .map(s -> utc(s.attempt().startedAt()))
                                .toArray(OffsetDateTime[]::new),
                        successes.stream().map(s -> latencyMs(s.attempt())).toArray(Integer[]::new),
                        successes.stream().map(s -> s.attempt().responseCode()).toArray(Integer[]::new)))
                .map(rows -> {
                    Set<UUID> written = new HashSet<>();
                    rows.forEach(row -> written.add(row.getUUID(0)));
                    return successes.stream()
                            .map(s -> written.contains(s.lease().id()))
                            .toList();
                });
    }

    private static int latencyMs(Attempt attempt) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, attempt.latencyMs()));
    }

    public enum Outcome {
        SUCCEEDED,
        RETRY,
        FAILED,
        /** The attempt failed and its endpoint became DISABLED with it. */
        RETRY_ENDPOINT_DISABLED,
        FAILED_ENDPOINT_DISABLED,
        STALE;

        static Outcome of(String status, boolean disabled) {
            return switch (status) {
                case "SUCCEEDED" -> SUCCEEDED;
                case "PENDING" -> disabled ? RETRY_ENDPOINT_DISABLED : RETRY;
                default -> disabled ? FAILED_ENDPOINT_DISABLED : FAILED;
            };
        }
    }

    private static Uni<Void> insertAttempt(
            SqlClient tx, UUID deliveryId, int number, Attempt attempt, OffsetDateTime next) {
        String error = attempt.error() == null || attempt.error().length() <= 500
                ? attempt.error()
                : attempt.error().substring(0, 500);
        return tx.preparedQuery(
                        """
                        INSERT INTO webhook_delivery_attempts
                            (delivery_id, attempt, started_at, latency_ms, response_code, outcome, error, next_attempt_at)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""")
                .execute(Tuple.tuple()
                        .addValue(deliveryId)
                        .addValue(number)
                        .addValue(utc(attempt.startedAt()))
                        .addValue(latencyMs(attempt))
                        .addValue(attempt.responseCode())
                        .addValue(attempt.succeeded() ? "SUCCEEDED" : "FAILED")
                        .addValue(error)
                        .addValue(next))
                .replaceWithVoid();
    }

    private static Uni<Boolean> healthy(SqlClient tx, UUID endpointId) {
        return tx.preparedQuery(
                        """
                        UPDATE webhook_endpoints SET failing_since = NULL, updated_at = now()
                         WHERE id = $1 AND failing_since IS NOT NULL""")
                .execute(Tuple.of(endpointId))
                .replaceWith(false);
    }

    /**
     * Marks the endpoint failing since this attempt unless it already was; one failing for longer than
     * {@code disableAfter} is DISABLED, with one operations item (the open-item index makes it one). True when this
     * attempt disabled it.
     */
    private static Uni<Boolean> failing(SqlClient tx, UUID endpointId, Instant startedAt, Duration disableAfter) {
        return tx.preparedQuery(
                        """
                        UPDATE webhook_endpoints
                           SET failing_since = coalesce(failing_since, $2), updated_at = now()
                         WHERE id = $1""")
                .execute(Tuple.of(endpointId, utc(startedAt)))
                .chain(() -> tx.preparedQuery(
                                """
                                UPDATE webhook_endpoints
                                   SET status = 'DISABLED', updated_at = now(),
                                       disabled_reason = 'every attempt failed since ' || failing_since
                                 WHERE id = $1 AND status = 'ENABLED'
                                   AND failing_since < now() - make_interval(secs => $2)
                                RETURNING merchant_id, url, failing_since""")
                        .execute(Tuple.of(endpointId, disableAfter.toMillis() / 1000.0)))
                .flatMap(disabled -> {
                    if (disabled.rowCount() == 0) {
                        return Uni.createFrom().item(false);
                    }
                    Row row = disabled.iterator().next();
                    JsonObject details = new JsonObject()
                            .put("merchantId", row.getUUID("merchant_id").toString())
                            .put("url", row.getString("url"))
                            .put(
                                    "failingSince",
                                    row.getOffsetDateTime("failing_since").toString());
                    return tx.preparedQuery(
                                    """
                                    INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                                    VALUES ('webhook_endpoint', $1, 'webhook_endpoint_disabled', $2)
                                    ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING""")
                            .execute(Tuple.of(endpointId.toString(), details))
                            .replaceWith(true);
                });
    }

    /**
     * Ends a leased delivery FAILED without an attempt: its endpoint is no longer ENABLED (disabled or deleted), or
     * its event is gone from the feed. Nothing is sent for it.
     */
    public Uni<Boolean> close(Lease lease) {
        return pool.preparedQuery(
                        """
                        UPDATE webhook_deliveries SET status = 'FAILED', next_attempt_at = NULL, updated_at = now()
                         WHERE id = $1 AND status = 'PENDING' AND next_attempt_at = $2""")
                .execute(Tuple.of(lease.id(), lease.leasedUntil()))
                .map(rows -> rows.rowCount() == 1);
    }

    /**
     * Gives back a leased delivery that was not sent (its sender is stopping): due at once for another sender, no
     * attempt counted. False when the lease had already ended (another sender owns it).
     */
    public Uni<Boolean> giveBack(Lease lease) {
        return pool.preparedQuery(
                        """
                        UPDATE webhook_deliveries SET next_attempt_at = now(), updated_at = now()
                         WHERE id = $1 AND status = 'PENDING' AND next_attempt_at = $2""")
                .execute(Tuple.of(lease.id(), lease.leasedUntil()))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Deliveries due now (the backlog gauge). */
    public Uni<Long> due() {
        return pool.query(
                        "SELECT count(*) FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= now()")
                .execute()
                .map(rows -> rows.iterator().next().getLong(0));
    }

    private static OffsetDateTime utc(Instant instant) {
        return instant.atOffset(ZoneOffset.UTC);
    }
}
