package com.payments.api.merchants;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The Caffeine classes that this module's caches ({@link AuthFailureLimiter}, {@link RateLimiter},
 * {@link MerchantAuthService}) need in the native executable: Caffeine picks a cache class and a node class by the
 * builder's features (maximum size with expiry after access or after write) and creates them by reflection. The
 * native executable answered every merchant API request with 500 ({@code IllegalStateException: PSAMS}, the node
 * class of maximum size and expiry after access) until these were registered.
 */
@RegisterForReflection(
        classNames = {
            "com.github.benmanes.caffeine.cache.SSMSA",
            "com.github.benmanes.caffeine.cache.PSAMS",
            "com.github.benmanes.caffeine.cache.SSMSW",
            "com.github.benmanes.caffeine.cache.PSWMS"
        })
final class CaffeineReflection {
    private CaffeineReflection() {}
}
