package com.payments.api.merchants;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.payments.api.Merchant;
import com.payments.api.common.Refusal;
import com.payments.api.common.RequestHash;
import com.payments.api.config.ApiConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.security.AuthenticationFailedException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Merchant authentication: {@code Authorization: Bearer <api key>} → SHA-256 → merchant_api_keys (not revoked,
 * merchant ACTIVE). Only the key's hash is kept, in the database and in the caches below (docs/api.md):
 *
 * <ul>
 *   <li>known keys: a successful lookup is trusted for {@code payments.auth.cache-ttl}, then looked up again. A key
 *       that authenticated in the last {@value #KNOWN_KEY_HOURS} hours is looked up even when its client address is
 *       over its failure allowance, so good keys keep working while bad ones from the same address are refused;
 *   <li>unknown keys: a failed lookup is remembered for {@code payments.auth.negative-cache-ttl}, so repeating a bad
 *       key costs no query. A key issued through this instance's operator API is forgotten here at once;
 *   <li>every failure (no key, malformed, unknown, revoked) takes one from the client address's allowance
 *       ({@link AuthFailureLimiter}); a key not known here is looked up only if the allowance has one left, so
 *       failed lookups per address are bounded whatever the keys;
 *   <li>concurrent requests with the same key not known here share one lookup and take one from the allowance
 *       between them: a merchant's burst to a freshly started instance is not taken for a flood of bad keys (each
 *       request took one, so a burst of more than the allowance was answered 429 until the first lookup returned).
 * </ul>
 *
 * {@code payments_auth_lookups_total{result=found|unknown}} counts the lookups that reached the database.
 */
@ApplicationScoped
public class MerchantAuthService {
    private static final int MAX_KEY_LENGTH = 200;
    private static final int MAX_CACHE_ENTRIES = 10_000;
    static final int KNOWN_KEY_HOURS = 24;

    /** A merchant as of its last successful lookup. */
    private record Verified(Merchant merchant, long verifiedAt) {}

    private final Pool pool;
    private final MerchantRepository merchants;
    private final AuthFailureLimiter failures;
    private final long ttlNanos;
    private final Cache<String, Verified> known;
    private final Cache<String, Boolean> unknown;
    private final Counter found;
    private final Counter notFound;
    /** Lookups of keys not known here that are running, by key hash: later requests with the key wait for them. */
    private final ConcurrentMap<String, CompletableFuture<Merchant>> lookups = new ConcurrentHashMap<>();

    public MerchantAuthService(
            Pool pool,
            MerchantRepository merchants,
            AuthFailureLimiter failures,
            ApiConfig config,
            MeterRegistry registry) {
        this.pool = pool;
        this.merchants = merchants;
        this.failures = failures;
        this.ttlNanos = config.auth().cacheTtl().toNanos();
        this.known = Caffeine.newBuilder()
                .maximumSize(MAX_CACHE_ENTRIES)
                .expireAfterWrite(Duration.ofHours(KNOWN_KEY_HOURS))
                .build();
        this.unknown = Caffeine.newBuilder()
                .maximumSize(MAX_CACHE_ENTRIES)
                .expireAfterWrite(config.auth().negativeCacheTtl())
                .build();
        this.found = registry.counter("payments.auth.lookups", "result", "found");
        this.notFound = registry.counter("payments.auth.lookups", "result", "unknown");
    }

    /**
     * The merchant of an {@code Authorization} header, or a failed Uni: {@link AuthenticationFailedException}, or a
     * {@link Refusal} {@code too_many_failed_authentications} when {@code client} (an address as {@link
     * AuthFailureLimiter#clientOf} gives it) has failed too often. A known key answers from memory, without I/O.
     */
    public Uni<Merchant> authenticate(String authorization, String client) {
        if (authorization == null
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.length() > 7 + MAX_KEY_LENGTH) {
            return failed(client);
        }
        byte[] hash = hash(authorization.substring(7).trim());
        String keyHash = HexFormat.of().formatHex(hash);
        Verified verified = known.getIfPresent(keyHash);
        if (verified != null && System.nanoTime() - verified.verifiedAt() - ttlNanos < 0) {
            return Uni.createFrom().item(verified.merchant());
        }
        if (unknown.getIfPresent(keyHash) != null) {
            return failed(client);
        }
        if (verified == null) {
            CompletableFuture<Merchant> lookup = new CompletableFuture<>();
            CompletableFuture<Merchant> running = lookups.putIfAbsent(keyHash, lookup);
            if (running != null) {
                // its key not found: this request fails as one with a known bad key does, taking its own failure
                return answerOf(running)
                        .onFailure(AuthenticationFailedException.class)
                        .recoverWithUni(() -> failed(client));
            }
            // Taken before the lookup, so concurrent bad keys cannot all pass the check; given back on success.
            try {
                failures.takeFailure(client);
            } catch (Refusal tooMany) {
                lookups.remove(keyHash, lookup);
                lookup.completeExceptionally(tooMany);
                return Uni.createFrom().failure(tooMany);
            }
            // Runs to its end even if this request goes away: others with the key may be waiting for it.
            lookUp(hash, keyHash, client, null)
                    .subscribe()
                    .with(
                            merchant -> {
                                lookups.remove(keyHash, lookup);
                                lookup.complete(merchant);
                            },
                            failure -> {
                                lookups.remove(keyHash, lookup);
                                lookup.completeExceptionally(failure);
                            });
            return answerOf(lookup);
        }
        return lookUp(hash, keyHash, client, verified);
    }

    /**
     * A running lookup's answer, on this request's Vert.x context. A request that goes away stops waiting without
     * cancelling the lookup, which others may be waiting for.
     */
    private static Uni<Merchant> answerOf(CompletableFuture<Merchant> lookup) {
        Context caller = Vertx.currentContext();
        return Uni.createFrom()
                .emitter(emitter -> lookup.whenComplete((merchant, failure) -> {
                    Runnable answer = () -> {
                        if (failure != null) {
                            emitter.fail(failure instanceof CompletionException ? failure.getCause() : failure);
                        } else {
                            emitter.complete(merchant);
                        }
                    };
                    if (caller == null || caller == Vertx.currentContext()) {
                        answer.run();
                    } else {
                        caller.runOnContext(ignored -> answer.run());
                    }
                }));
    }

    private Uni<Merchant> lookUp(byte[] hash, String keyHash, String client, Verified verified) {
        return merchants.findByKeyHash(pool, hash).map(merchant -> {
            if (merchant == null) {
                notFound.increment();
                known.invalidate(keyHash);
                unknown.put(keyHash, Boolean.TRUE);
                if (verified != null) {
                    failures.takeFailure(client); // a key that was good and is no more (revoked): a failure now
                }
                throw new AuthenticationFailedException();
            }
            found.increment();
            known.put(keyHash, new Verified(merchant, System.nanoTime()));
            if (verified == null) {
                failures.giveBack(client);
            }
            return merchant;
        });
    }

    private Uni<Merchant> failed(String client) {
        try {
            failures.takeFailure(client);
        } catch (Refusal tooMany) {
            return Uni.createFrom().failure(tooMany);
        }
        return Uni.createFrom().failure(new AuthenticationFailedException());
    }

    /** Forgets the merchant's known keys (after a rotation in this instance: its revoked keys stop here at once). */
    public void invalidate(UUID merchantId) {
        known.asMap().values().removeIf(v -> v.merchant().id().equals(merchantId));
    }

    /** A key was just issued in this instance: it works here at once, even if it was refused a moment ago. */
    public void issued(byte[] keyHash) {
        unknown.invalidate(HexFormat.of().formatHex(keyHash));
    }

    public static byte[] hash(String apiKey) {
        return RequestHash.sha256().digest(apiKey.getBytes(StandardCharsets.UTF_8));
    }
}
