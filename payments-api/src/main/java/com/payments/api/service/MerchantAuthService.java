package com.payments.api.service;

import com.payments.api.Merchant;
import com.payments.api.config.ApiConfig;
import com.payments.api.repository.MerchantRepository;
import com.payments.api.rest.ApiProblem;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Merchant authentication: {@code Authorization: Bearer <api key>} → SHA-256 → merchant_api_keys (not revoked,
 * merchant ACTIVE). Successful lookups are cached for {@code payments.auth.cache-ttl}.
 */
@ApplicationScoped
public class MerchantAuthService {
    private static final int MAX_KEY_LENGTH = 200;
    private static final int MAX_CACHE_ENTRIES = 10_000;

    private record Cached(Merchant merchant, long expiresAt) {}

    private final Pool pool;
    private final MerchantRepository merchants;
    private final long ttlNanos;
    private final ConcurrentHashMap<String, Cached> cache = new ConcurrentHashMap<>();

    public MerchantAuthService(Pool pool, MerchantRepository merchants, ApiConfig config) {
        this.pool = pool;
        this.merchants = merchants;
        this.ttlNanos = config.auth().cacheTtl().toNanos();
    }

    /** The merchant of the request, or a failed Uni with 401. */
    public Uni<Merchant> authenticate(String authorization) {
        if (authorization == null
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.length() > 7 + MAX_KEY_LENGTH) {
            return Uni.createFrom().failure(ApiProblem.unauthorized());
        }
        byte[] hash = hash(authorization.substring(7).trim());
        String cacheKey = HexFormat.of().formatHex(hash);
        Cached cached = cache.get(cacheKey);
        long now = System.nanoTime();
        if (cached != null && now - cached.expiresAt() < 0) {
            return Uni.createFrom().item(cached.merchant());
        }
        return merchants.findByKeyHash(pool, hash).map(merchant -> {
            if (merchant == null) {
                cache.remove(cacheKey);
                throw ApiProblem.unauthorized();
            }
            if (cache.size() >= MAX_CACHE_ENTRIES) {
                cache.clear();
            }
            cache.put(cacheKey, new Cached(merchant, System.nanoTime() + ttlNanos));
            return merchant;
        });
    }

    /** Forgets cached lookups (after a key rotation in this instance). */
    public void invalidate() {
        cache.clear();
    }

    public static byte[] hash(String apiKey) {
        return RequestHash.sha256().digest(apiKey.getBytes(StandardCharsets.UTF_8));
    }
}
