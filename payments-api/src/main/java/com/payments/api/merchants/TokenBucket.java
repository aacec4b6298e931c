package com.payments.api.merchants;

/**
 * A token bucket that holds at most {@code capacity} tokens (the burst) and refills {@code perSecond} tokens a
 * second; it starts full. The caller passes the limits on every call, so a changed limit applies at once.
 */
final class TokenBucket {
    private double tokens = -1;
    private long last;

    /** Takes one token if there is one. */
    synchronized boolean tryTake(double capacity, double perSecond, long nanoTime) {
        refill(capacity, perSecond, nanoTime);
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }

    /** Returns a token taken by {@link #tryTake} that was not used after all. */
    synchronized void giveBack(double capacity) {
        tokens = Math.min(capacity, tokens + 1);
    }

    /** Whole seconds until a token is available (at least 1). */
    synchronized int secondsUntilToken(double capacity, double perSecond, long nanoTime) {
        refill(capacity, perSecond, nanoTime);
        return (int) Math.max(1, Math.ceil((1 - tokens) / perSecond));
    }

    private void refill(double capacity, double perSecond, long nanoTime) {
        tokens = tokens < 0 ? capacity : Math.min(capacity, tokens + (nanoTime - last) * perSecond / 1e9);
        last = nanoTime;
    }
}
