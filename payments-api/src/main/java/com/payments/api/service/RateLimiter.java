package com.payments.api.service;

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
    private final ConcurrentHashMap<UUID, Bucket> buckets = new ConcurrentHashMap<>();

    /** Takes one token or throws 429 with Retry-After. */
    public void acquire(Merchant merchant) {
        Bucket bucket = buckets.computeIfAbsent(merchant.id(), id -> new Bucket());
        if (!bucket.tryTake(merchant.rateLimitPerSecond(), System.nanoTime())) {
            throw new ApiProblem(
                    429,
                    "rate_limited",
                    "Too many requests",
                    "This merchant is over its request rate; retry after the Retry-After seconds",
                    1);
        }
    }

    private static final class Bucket {
        private double tokens = -1;
        private long last;

        synchronized boolean tryTake(int ratePerSecond, long now) {
            if (tokens < 0) {
                tokens = ratePerSecond;
            } else {
                tokens = Math.min(ratePerSecond, tokens + (now - last) * ratePerSecond / 1e9);
            }
            last = now;
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }
}
