package com.payments.recon.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Reconciler settings; each can be overridden by a command-line argument (docs/reconciler.md). */
@ConfigMapping(prefix = "recon")
public interface ReconConfig {
    /**
     * Where the settlement lines of a date come from: {@code psp}, the PSP port of {@code psp.provider} (the sandbox's
     * settlement file, or Stripe's balance transactions of the day), or a file path in which {@code {date}} is replaced
     * by the business date (the sandbox's settlement file or Stripe's itemized payout reconciliation report, told apart
     * by the header).
     */
    Optional<String> source();

    /** Days between a business date and the run that reconciles it (T+1): the default date is today (UTC) minus this. */
    @WithDefault("1")
    int lagDays();

    /**
     * How many earlier dates each run reconciles again, oldest first, so that a break gets its second sighting (debounce)
     * and late items of the previous day meet the next day's file.
     */
    @WithDefault("1")
    int lookbackDays();

    /**
     * Midnight cut-off tolerance: an item of the last {@code window} of a day may settle in the next day's file (and one
     * of the first {@code window} in the previous day's) without being a break.
     */
    @WithDefault("15m")
    Duration window();

    /**
     * How many business dates before D the match searches for the settlement line of an item we recorded on D that D's
     * file lacks. {@code captured_at} (a refund's {@code completed_at}) is when we learned the outcome, not when the PSP
     * booked it: the resolver may learn it hours later (it gives up after 72 h), so the line can be in an earlier file.
     * Found there with the same amount and currency, the item is {@code SETTLED_EARLIER}, not {@code MISSING_AT_PSP}.
     */
    @WithDefault("3")
    int lateResolutionDays();

    /**
     * Debounce: a break is REPORTED only when every run of its date has seen it for at least this long (since its first
     * sighting, or since it was reopened). Runs closer together than this, such as a Job retry or a manual re-run
     * minutes later, do not count as a second sighting; the next day's run does. {@code 0s}: the second consecutive run
     * reports, whatever the gap.
     */
    @WithDefault("12h")
    Duration reportAfter();

    /** PostgreSQL {@code work_mem} of the run's transaction: the match hashes a whole day (1M lines: 256MB keeps it in memory). */
    @WithDefault("256MB")
    String workMem();
}
