package com.payments.delivery;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * When a failed delivery is tried again: after the n-th failed attempt, a wait drawn uniformly from [0, schedule[n-1]]
 * (full jitter; the last entry repeats), never later than {@code giveUpAfter} after the delivery was created. A
 * delivery whose failed attempt came at or after that deadline is given up (empty).
 */
public record RetrySchedule(List<Duration> schedule, Duration giveUpAfter, DoubleSupplier random) {

    public RetrySchedule {
        if (schedule.isEmpty()) {
            throw new IllegalArgumentException("payments.webhooks.schedule needs at least one duration");
        }
    }

    /** The next attempt after the {@code failedAttempts}-th failed one (1-based) ended at {@code now}; empty: give up. */
    public Optional<Instant> next(Instant createdAt, int failedAttempts, Instant now) {
        Instant deadline = createdAt.plus(giveUpAfter);
        if (!now.isBefore(deadline)) {
            return Optional.empty();
        }
        Duration max = schedule.get(Math.min(failedAttempts, schedule.size()) - 1);
        Instant next = now.plusMillis((long) (random.getAsDouble() * max.toMillis()));
        return Optional.of(next.isAfter(deadline) ? deadline : next);
    }
}
