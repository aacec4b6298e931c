package com.payments.api.merchants;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.payments.api.Merchant;
import com.payments.api.common.Refusal;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.UUID;

/**
 * Per-merchant token bucket ({@code merchants.rate_limit_per_second}, burst of one second), in memory and per
 * instance: with N replicas a merchant gets up to N times its rate. Taken by {@link RateLimitFilter}, after
 * authentication and before the idempotency layer; a refusal is never stored. At most {@value #MAX_MERCHANTS} merchants
 * are tracked; a merchant idle for a minute is forgotten (its bucket, refilled within a second, would be full anyway).
 */
@ApplicationScoped
public class RateLimiter {
    static final int MAX_MERCHANTS = 100_000;

    private final Cache<UUID, TokenBucket> buckets = Caffeine.newBuilder()
            .maximumSize(MAX_MERCHANTS)
            .expireAfterAccess(Duration.ofMinutes(1))
            .build();

    /** Takes one token or refuses ({@code rate_limited}, retry after a second). */
    public void acquire(Merchant merchant) {
        TokenBucket bucket = buckets.get(merchant.id(), id -> new TokenBucket());
        int rate = merchant.rateLimitPerSecond();
        if (!bucket.tryTake(rate, rate, System.nanoTime())) {
            throw new Refusal(
                    Refusal.Kind.TOO_MANY_REQUESTS,
                    "rate_limited",
                    "Too many requests",
                    "This merchant is over its request rate; retry after the Retry-After seconds",
                    1);
        }
    }
}
