package com.payments.api.merchants;

import com.payments.api.Merchant;
import com.payments.api.rest.ApiProblem;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-merchant token bucket ({@code merchants.rate_limit_per_second}, burst of one second), in memory and per
 * instance: with N replicas a merchant gets up to N times its rate. Checked after authentication and before the
 * idempotency layer; a 429 is never stored.
 */
@ApplicationScoped
public class RateLimiter {
    private final ConcurrentHashMap<UUID, TokenBucket> buckets = new ConcurrentHashMap<>();

    /** Takes one token or throws 429 with Retry-After. */
    public void acquire(Merchant merchant) {
        TokenBucket bucket = buckets.computeIfAbsent(merchant.id(), id -> new TokenBucket());
        int rate = merchant.rateLimitPerSecond();
        if (!bucket.tryTake(rate, rate, System.nanoTime())) {
            throw new ApiProblem(
                    429,
                    "rate_limited",
                    "Too many requests",
                    "This merchant is over its request rate; retry after the Retry-After seconds",
                    1);
        }
    }
}
