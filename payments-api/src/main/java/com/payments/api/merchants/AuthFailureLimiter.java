package com.payments.api.merchants;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.payments.api.common.Refusal;
import com.payments.api.config.ApiConfig;
import io.vertx.core.net.SocketAddress;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * Failed merchant authentications per client address: a token bucket of {@code payments.auth.max-failures} that
 * refills over {@code payments.auth.failure-window}, in memory per instance. A failure takes a token; without one
 * the request is refused {@code too_many_failed_authentications} with a retry time, and the key is not looked up in the
 * database. Successes take nothing, so good keys from an address keep working while its bad keys are refused.
 *
 * <p>The client address is what Vert.x reports as the request's remote address: the TCP peer, or the address a
 * trusted proxy forwarded when {@code quarkus.http.proxy.*} is configured so (docs/api.md). IPv6 addresses count per
 * /64, the block one host usually gets. At most {@value #MAX_ADDRESSES} addresses are tracked; an address not seen
 * for a whole window is forgotten (its bucket would be full again anyway).
 */
@ApplicationScoped
public class AuthFailureLimiter {
    static final int MAX_ADDRESSES = 100_000;

    private final double capacity;
    private final double perSecond;
    private final Cache<String, TokenBucket> buckets;

    public AuthFailureLimiter(ApiConfig config) {
        Duration window = config.auth().failureWindow();
        if (config.auth().maxFailures() < 1 || window.isNegative() || window.isZero()) {
            throw new IllegalStateException("payments.auth.max-failures must be >= 1 and failure-window positive");
        }
        this.capacity = config.auth().maxFailures();
        this.perSecond = capacity / (config.auth().failureWindow().toNanos() / 1e9);
        this.buckets = Caffeine.newBuilder()
                .maximumSize(MAX_ADDRESSES)
                .expireAfterAccess(config.auth().failureWindow())
                .build();
    }

    /** Takes one failure from the client's allowance, or refuses when it has none left. */
    public void takeFailure(String client) {
        TokenBucket bucket = buckets.get(client, c -> new TokenBucket());
        long now = System.nanoTime();
        if (!bucket.tryTake(capacity, perSecond, now)) {
            throw new Refusal(
                    Refusal.Kind.TOO_MANY_REQUESTS,
                    "too_many_failed_authentications",
                    "Too many failed authentications",
                    "Too many requests with a missing or unknown API key came from this address; retry after the"
                            + " Retry-After seconds",
                    bucket.secondsUntilToken(capacity, perSecond, now));
        }
    }

    /** Gives back a failure taken by {@link #takeFailure} for a request that turned out to be authenticated. */
    public void giveBack(String client) {
        TokenBucket bucket = buckets.getIfPresent(client);
        if (bucket != null) {
            bucket.giveBack(capacity);
        }
    }

    /** The address that failures are counted by: IPv4 as it is, IPv6 by its /64 prefix. */
    public static String clientOf(SocketAddress remote) {
        if (remote == null || remote.hostAddress() == null) {
            return "unknown";
        }
        String host = remote.hostAddress();
        if (host.indexOf(':') < 0) {
            return host;
        }
        try {
            byte[] bytes = InetAddress.getByName(host).getAddress();
            if (bytes.length == 16) {
                java.util.Arrays.fill(bytes, 8, 16, (byte) 0);
                return InetAddress.getByAddress(bytes).getHostAddress() + "/64";
            }
            return host;
        } catch (UnknownHostException e) {
            return host;
        }
    }
}
