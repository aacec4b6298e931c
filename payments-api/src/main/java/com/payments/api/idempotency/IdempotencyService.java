package com.payments.api.idempotency;

import com.payments.api.common.Refusal;
import com.payments.api.idempotency.IdempotencyRepository.StoredKey;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Idempotency keys (docs/architecture.md §3-4, IETF Idempotency-Key draft). Keys are per merchant and are stored by the
 * statement that creates the resource (a payment claims its key IN_PROGRESS with the PROCESSING payment; a refund
 * stores its key COMPLETED with the reservation); here: what an already used key means ({@link #existing},
 * {@link #classify}) and {@link #complete} when the outcome is recorded. A key is purged only once its resource is
 * final ({@link IdempotencyCleanupJob}); a capture that never reached the PSP drops its key with the payment
 * ({@code PaymentRepository#dropNeverSent}).
 */
@ApplicationScoped
public class IdempotencyService {
    private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");

    /** What an already used key means for a new request under it. */
    public sealed interface Claim {
        /** Same request, still in flight elsewhere: refused for now. */
        record InFlight() implements Claim {}

        /** The key was used with a different request: refused. */
        record Mismatch() implements Claim {}

        /** Same request, completed: replay the stored answer (or the resource's current state). */
        record Completed(StoredAnswer answer, String resourceType, UUID resourceId) implements Claim {}
    }

    private final IdempotencyRepository keys;

    public IdempotencyService(IdempotencyRepository keys) {
        this.keys = keys;
    }

    /** Checks a key: required, 1-255 printable ASCII; refused as invalid otherwise (nothing stored). */
    public static String validateKey(String key) {
        if (key == null) {
            throw Refusal.invalid("missing_idempotency_key", "The Idempotency-Key header is required");
        }
        if (!KEY.matcher(key).matches()) {
            throw Refusal.invalid(
                    "invalid_idempotency_key", "Idempotency-Key must be 1-255 printable ASCII characters");
        }
        return key;
    }

    /**
     * What a request finds when its claim of the key lost (the claiming insert found the key taken): the stored
     * answer to replay, a request in flight, or another request under the same key. The use is recorded as a
     * replay of the key ({@code idempotency_replays}).
     */
    public Uni<Claim> existing(SqlClient conn, UUID merchantId, String key, byte[] requestHash) {
        return keys.find(conn, merchantId, key, requestHash).map(stored -> classify(stored, requestHash));
    }

    /**
     * The answer the merchant's key stores, for the request that holds the key (nothing is recorded as a replay); null
     * while the key is not completed.
     */
    public Uni<StoredAnswer> storedAnswer(SqlClient conn, UUID merchantId, String key) {
        return keys.read(conn, merchantId, key)
                .map(stored -> stored == null || !stored.completed()
                        ? null
                        : new StoredAnswer(stored.responseStatus(), stored.responseBody()));
    }

    /** What a used key means for a request with this hash. */
    public static Claim classify(StoredKey stored, byte[] requestHash) {
        if (stored == null) {
            // released between our insert and our read: the other request gave it back; the client retries
            return new Claim.InFlight();
        }
        if (!Arrays.equals(stored.requestHash(), requestHash)) {
            return new Claim.Mismatch();
        }
        if (!stored.completed()) {
            return new Claim.InFlight();
        }
        return new Claim.Completed(
                new StoredAnswer(stored.responseStatus(), stored.responseBody()),
                stored.resourceType(),
                stored.resourceId());
    }

    /**
     * Stores the response of the resource's in-progress key (no-op when already completed); {@code finalOutcome}:
     * the resource is final, so the key's retention starts now.
     */
    public Uni<Boolean> complete(
            SqlClient conn, String resourceType, UUID resourceId, StoredAnswer answer, boolean finalOutcome) {
        return keys.complete(conn, resourceType, resourceId, answer.status(), answer.body(), finalOutcome);
    }

    /** Why a request whose claim lost is refused: its key is in flight, or was used for another request. */
    public static Refusal refusalFor(Claim claim, int inFlightRetryAfterSeconds) {
        if (claim instanceof Claim.InFlight) {
            return new Refusal(
                    Refusal.Kind.CONFLICT,
                    "idempotency_key_in_use",
                    "Request in progress",
                    "A request with this Idempotency-Key is still in progress; retry later",
                    inFlightRetryAfterSeconds);
        }
        if (claim instanceof Claim.Mismatch) {
            return new Refusal(
                    Refusal.Kind.UNPROCESSABLE,
                    "idempotency_key_reused",
                    "Idempotency-Key reused",
                    "This Idempotency-Key was used with a different request",
                    null);
        }
        throw new IllegalArgumentException("not a rejection: " + claim);
    }
}
