package com.payments.api.merchants;

import io.quarkus.security.identity.SecurityIdentity;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * The per-merchant rate limit of every {@link RateLimited} call: after authentication (the {@code @RolesAllowed}
 * check runs before request filters and leaves the identity resolved, so reading it here costs nothing), before the
 * body is read and before the idempotency layer. Over the rate: 429 {@code rate_limited}, nothing stored.
 */
public class RateLimitFilter {
    private final RateLimiter limiter;
    private final SecurityIdentity identity;

    public RateLimitFilter(RateLimiter limiter, SecurityIdentity identity) {
        this.limiter = limiter;
        this.identity = identity;
    }

    @RateLimited
    @ServerRequestFilter
    public void limit() {
        limiter.acquire(MerchantPrincipal.of(identity));
    }
}
