package com.payments.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetryScheduleTest {
    static final List<Duration> DEFAULT = List.of(
            Duration.ofSeconds(5),
            Duration.ofMinutes(5),
            Duration.ofMinutes(30),
            Duration.ofHours(2),
            Duration.ofHours(5),
            Duration.ofHours(10));
    final Instant created = Instant.parse("2026-12-01T00:00:00Z");

    @Test
    void waitsAreTheScheduleAtMostWithFullJitterAndTheLastRepeats() {
        RetrySchedule highest = new RetrySchedule(DEFAULT, Duration.ofDays(3), () -> 0.999999);
        RetrySchedule lowest = new RetrySchedule(DEFAULT, Duration.ofDays(3), () -> 0.0);
        Instant now = created.plusSeconds(1);
        for (int failed = 1; failed <= 8; failed++) {
            Duration max = DEFAULT.get(Math.min(failed, DEFAULT.size()) - 1);
            Duration wait =
                    Duration.between(now, highest.next(created, failed, now).orElseThrow());
            assertThat(wait)
                    .isLessThanOrEqualTo(max)
                    .isGreaterThan(max.multipliedBy(99).dividedBy(100));
            assertThat(lowest.next(created, failed, now)).contains(now);
        }
    }

    @Test
    void noAttemptAfterGiveUpAfterAndNoneOnceItPassed() {
        RetrySchedule schedule = new RetrySchedule(DEFAULT, Duration.ofDays(3), () -> 0.999999);
        Instant deadline = created.plus(Duration.ofDays(3));
        Instant lateFailure = deadline.minus(Duration.ofHours(1));
        assertThat(schedule.next(created, 12, lateFailure)).contains(deadline);
        assertThat(schedule.next(created, 13, deadline)).isEmpty();
    }

    /** With the full waits, the default schedule tries 13 times within the 3 days (attempt 1 at creation, the 13th at the 3-day deadline). */
    @Test
    void defaultScheduleAttemptsWithinThreeDays() {
        RetrySchedule schedule = new RetrySchedule(DEFAULT, Duration.ofDays(3), () -> 0.999999);
        Instant at = created;
        int attempts = 1;
        while (true) {
            var next = schedule.next(created, attempts, at);
            if (next.isEmpty()) {
                break;
            }
            at = next.get();
            attempts++;
        }
        assertThat(at).isEqualTo(created.plus(Duration.ofDays(3)));
        assertThat(attempts).isEqualTo(13);
    }
}
