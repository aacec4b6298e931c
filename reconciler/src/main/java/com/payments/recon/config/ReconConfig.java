package com.payments.recon.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Reconciler settings; each can be overridden by a command-line argument (docs/reconciler.md). */
@ConfigMapping(prefix = "recon")
public interface ReconConfig {
    /**
     * Where settlement files come from: an {@code http(s)://} base URL of the PSP (the file is {@code
     * GET <url>/v1/settlements/<date>.csv}), or a file path in which {@code {date}} is replaced by the business date.
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

    /** PostgreSQL {@code work_mem} of the run's transaction: the match hashes a whole day (1M lines: 256MB keeps it in memory). */
    @WithDefault("256MB")
    String workMem();

    /** Timeout of the HTTP download of a settlement file. */
    @WithDefault("5m")
    Duration downloadTimeout();
}
