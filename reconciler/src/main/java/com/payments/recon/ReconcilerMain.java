package com.payments.recon;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.recon.config.ReconConfig;
import com.payments.recon.service.ReconciliationService;
import com.payments.recon.service.RunResult;
import com.payments.recon.service.SettlementSource;
import io.quarkus.logging.Log;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * One reconciliation run, then exit: the exit code is the Kubernetes Job's result.
 *
 * <p>Arguments (each overrides the {@code recon.*} property): {@code --date=yyyy-mm-dd} (default today UTC minus
 * {@code recon.lag-days}), {@code --source=psp|<path with {date}>}, {@code --window=15m|PT15M},
 * {@code --lookback=<days>}. Dates {@code date - lookback .. date} are reconciled, oldest first.
 */
@QuarkusMain
public class ReconcilerMain implements QuarkusApplication {
    /** Every date reconciled, no REPORTED break open. */
    public static final int OK = 0;
    /** A run failed (bad arguments, file unavailable or malformed, database error): nothing of that date changed. */
    public static final int FAILED = 1;
    /**
     * Every run succeeded and at least one date has REPORTED breaks open (seen by every run of the date for at least
     * {@code recon.report-after}). Final: the CronJob fails the Job on it without a retry (podFailurePolicy).
     */
    public static final int BREAKS_REPORTED = 2;
    /** Another run of a date held its lock: that date was skipped. */
    public static final int LOCKED = 3;

    private final ReconciliationService service;
    private final ReconConfig config;
    private final ObjectMapper json;
    private final Clock clock;

    ReconcilerMain(ReconciliationService service, ReconConfig config, ObjectMapper json) {
        this.service = service;
        this.config = config;
        this.json = json;
        this.clock = Clock.systemUTC();
    }

    @Override
    public int run(String... args) {
        LocalDate date = LocalDate.now(clock).minusDays(config.lagDays());
        String source = config.source().orElse(null);
        Duration window = config.window();
        int lookback = config.lookbackDays();
        try {
            for (String arg : args) {
                String value = arg.substring(arg.indexOf('=') + 1);
                if (arg.startsWith("--date=")) {
                    date = LocalDate.parse(value);
                } else if (arg.startsWith("--source=")) {
                    source = value;
                } else if (arg.startsWith("--window=")) {
                    window = duration(value);
                } else if (arg.startsWith("--lookback=")) {
                    lookback = Integer.parseInt(value);
                } else {
                    throw new IllegalArgumentException("unknown argument " + arg);
                }
            }
            String problem = SettlementSource.problem(source);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            if (lookback < 0 || window.isNegative() || window.compareTo(Duration.ofHours(12)) > 0) {
                throw new IllegalArgumentException("lookback must be >= 0 and window between 0 and 12h");
            }
        } catch (IllegalArgumentException | DateTimeParseException e) {
            Log.errorf("bad arguments: %s", e.getMessage());
            return FAILED;
        }
        int exit = OK;
        for (LocalDate d = date.minusDays(lookback); !d.isAfter(date); d = d.plusDays(1)) {
            RunResult result = service.run(d, source, window);
            System.out.println(toJson(result));
            exit = worst(
                    exit,
                    switch (result.status()) {
                        case RunResult.FAILED -> FAILED;
                        case RunResult.LOCKED -> LOCKED;
                        default -> result.reportedOpen() > 0 ? BREAKS_REPORTED : OK;
                    });
        }
        return exit;
    }

    /** FAILED over LOCKED over BREAKS_REPORTED over OK. */
    static int worst(int a, int b) {
        int[] rank = {0, 3, 1, 2}; // by exit code: OK, FAILED, BREAKS_REPORTED, LOCKED
        return rank[a] >= rank[b] ? a : b;
    }

    static Duration duration(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.startsWith("p")) {
            return Duration.parse(v.toUpperCase(Locale.ROOT));
        }
        long amount = Long.parseLong(v.substring(0, v.length() - 1));
        return switch (v.charAt(v.length() - 1)) {
            case 's' -> Duration.ofSeconds(amount);
            case 'm' -> Duration.ofMinutes(amount);
            case 'h' -> Duration.ofHours(amount);
            default -> throw new IllegalArgumentException("window: use 15m, 900s, 1h or PT15M");
        };
    }

    private String toJson(RunResult result) {
        try {
            return json.writeValueAsString(result.summary());
        } catch (Exception e) {
            return "{\"status\":\"" + result.status() + "\"}";
        }
    }
}
