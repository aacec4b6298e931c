package com.payments.psp;

import java.time.Duration;

/**
 * Settings of a {@link PspConcurrencyLimit}.
 *
 * @param initial the limit at start, before any round trip was measured
 * @param min the limit never goes below this, however slow the PSP gets
 * @param max the hard ceiling of concurrent PSP calls per instance; the REST client's connection pool must be at
 *     least this large (one HTTP/1.1 keep-alive connection per call in flight), or calls under the limit queue for a
 *     connection unseen
 * @param maxWaiting calls that may wait for a permit at once; one more fails at once with {@link
 *     PspSaturatedException}
 * @param maxWait how long a call waits for a permit before it fails with {@link PspSaturatedException}
 */
public record PspLimitSettings(int initial, int min, int max, int maxWaiting, Duration maxWait) {
    public PspLimitSettings {
        if (min < 1 || initial < min || max < initial || maxWaiting < 0 || maxWait.isNegative()) {
            throw new IllegalArgumentException(
                    "PSP limit needs 1 <= min <= initial <= max, maxWaiting >= 0, maxWait >= 0: " + "min=" + min
                            + " initial=" + initial + " max=" + max + " maxWaiting=" + maxWaiting);
        }
    }
}
