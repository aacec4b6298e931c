package com.payments.recon.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.Topics;
import com.payments.contracts.events.PaymentCaptured;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.psp.settlement.SettlementFiles.Numbered;
import com.payments.psp.settlement.SettlementFormatException;
import com.payments.recon.config.ReconConfig;
import com.payments.recon.repository.ReconRepository;
import com.payments.recon.repository.ReconRepository.CapturedPayment;
import com.payments.recon.repository.ReconRepository.Reported;
import com.payments.recon.repository.ReconRepository.Resolved;
import com.payments.recon.repository.ReconRepository.SettledUnknown;
import com.payments.recon.service.RunSummary.Load;
import com.payments.recon.service.RunSummary.Match;
import io.opentelemetry.instrumentation.annotations.SpanAttribute;
import io.opentelemetry.instrumentation.annotations.WithSpan;
import io.quarkus.logging.Log;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * One reconciliation run of one business date, in one database transaction: load the settlement file with COPY, match,
 * record breaks with debounce, book fees, close the loop on settled UNKNOWN payments. A failure rolls everything back
 * and leaves a FAILED row in recon_runs.
 */
@ApplicationScoped
public class ReconciliationService {
    /** Log marker an alert matches: a break seen by every run of its date for at least recon.report-after. */
    public static final String REPORTED_MARKER = "RECON_BREAK_REPORTED";

    private static final int MAX_BREAK_LOG_LINES = 200;

    /**
     * Kafka headers of the events a run enqueues. A run has no caller whose trace it could continue; the command-mode
     * app does not start traces of its own.
     */
    private final DataSource dataSource;

    private final ReconRepository repository;
    private final SettlementSource source;
    private static final TypeReference<Map<String, String>> METADATA = new TypeReference<>() {};

    private final ObjectMapper json;
    private final String workMem;
    private final int lateResolutionDays;
    private final Duration reportAfter;
    private final TraceHeaders traceHeaders;

    ReconciliationService(
            DataSource dataSource,
            ReconRepository repository,
            SettlementSource source,
            ObjectMapper json,
            ReconConfig config,
            TraceHeaders traceHeaders) {
        this.dataSource = dataSource;
        this.traceHeaders = traceHeaders;
        this.repository = repository;
        this.source = source;
        this.json = json;
        if (!config.workMem().matches("\\d{1,6}(kB|MB|GB)")) {
            throw new IllegalArgumentException("recon.work-mem must look like 256MB");
        }
        this.workMem = config.workMem();
        if (config.lateResolutionDays() < 0 || config.reportAfter().isNegative()) {
            throw new IllegalArgumentException("recon.late-resolution-days and recon.report-after must be >= 0");
        }
        this.lateResolutionDays = config.lateResolutionDays();
        this.reportAfter = config.reportAfter();
    }

    /** The parts of the summary that every run has, and the load once it is done (kept for a failure after it). */
    private static final class Progress {
        final String businessDate;
        final String source;
        final String window;
        final long started = System.nanoTime();
        Load load;

        Progress(LocalDate date, String source, Duration window) {
            this.businessDate = date.toString();
            this.source = source;
            this.window = window.toString();
        }

        /** A run that never got to its work: locked out, or without a database (no run row, no duration). */
        RunSummary notRun(String status, String error) {
            return new RunSummary(businessDate, source, window, null, null, null, status, error, null, null);
        }

        RunSummary summary(Long runId, Match match, String status, String error, Long line) {
            return new RunSummary(
                    businessDate, source, window, runId, load, match, status, error, line, millisSince(started));
        }
    }

    /** One run, in a span of its own (the root of the trace of the events it writes). */
    @WithSpan("reconciliation run")
    public RunResult run(@SpanAttribute("recon.date") LocalDate date, String sourceSpec, Duration window) {
        Progress progress = new Progress(date, source.location(sourceSpec, date), window);
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                RunResult result = runInTransaction(c, date, sourceSpec, window, progress);
                if (RunResult.LOCKED.equals(result.status())) {
                    c.rollback();
                } else {
                    c.commit();
                }
                return result;
            } catch (Exception e) {
                c.rollback();
                return failed(c, date, progress, e);
            }
        } catch (SQLException e) {
            Log.errorf(e, "reconciliation of %s: database unavailable", date);
            RunSummary summary = progress.notRun(RunResult.FAILED, String.valueOf(e.getMessage()));
            return new RunResult(RunResult.FAILED, null, 0, summary);
        }
    }

    private RunResult runInTransaction(
            Connection c, LocalDate date, String sourceSpec, Duration window, Progress progress)
            throws SQLException, IOException {
        if (!repository.tryLock(c, date)) {
            Log.warnf("reconciliation of %s: another run of this date holds the lock; not started", date);
            RunSummary summary = progress.notRun(RunResult.LOCKED, null);
            return new RunResult(RunResult.LOCKED, null, 0, summary);
        }
        try (Statement s = c.createStatement()) {
            // Audit actor of the payments_log_transition trigger, for this transaction only.
            s.execute("SET LOCAL payments.actor = 'reconciler'");
            s.execute("SET LOCAL work_mem = '" + workMem + "'"); // validated in the constructor
        }
        long runId = repository.insertRun(c, date, "RUNNING");

        long loadStart = System.nanoTime();
        repository.deleteSettlements(c, date);
        long lines;
        try (Stream<Numbered> in = source.open(sourceSpec, date)) {
            lines = copy(c, in, date);
        }
        progress.load = new Load(lines, millisSince(loadStart));

        long matchStart = System.nanoTime();
        repository.match(c, date, window, lateResolutionDays);
        Map<String, Long> outcomes = repository.outcomeCounts(c);
        Long previousRunId = repository.previousRun(c, date, runId);
        repository.upsertBreaks(c, date, runId, previousRunId, reportAfter);
        List<Resolved> resolved = repository.resolveVanished(c, date, runId);
        List<Reported> reported = repository.newlyReported(c, date, runId);
        long matchMs = millisSince(matchStart);

        int capturedUnknown = closeTheLoop(c, date);
        Map<String, Long> fees = repository.bookFees(c, date);
        int queued = repository.queueForHumans(c, date) + repository.queueChangedFees(c, date, fees);
        Map<String, Long> open = repository.openBreaks(c, date);

        Map<String, Long> breaks = new TreeMap<>();
        for (String type : ReconRepository.BREAK_TYPES) {
            breaks.put(type, outcomes.getOrDefault(type, 0L));
        }
        Match match = new Match(
                matchMs,
                outcomes.getOrDefault("MATCHED", 0L) + outcomes.getOrDefault("MATCHED_OUTSIDE_WINDOW", 0L),
                repository.matchedAmounts(c),
                breaks,
                outcomes,
                outcomes.getOrDefault("AWAITING_NEXT_FILE", 0L),
                reported.size(),
                resolved.size(),
                open.get("OPEN"),
                open.get("REPORTED"),
                capturedUnknown,
                repository.chargebacks(c, date),
                fees,
                queued);
        RunSummary summary = progress.summary(runId, match, RunResult.SUCCEEDED, null, null);
        repository.finishRun(c, runId, RunResult.SUCCEEDED, json.writeValueAsString(summary));

        int logged = 0;
        for (Reported r : reported) {
            if (logged++ < MAX_BREAK_LOG_LINES) {
                Log.warnf(
                        "%s date=%s type=%s reference=%s internalAmount=%s pspAmount=%s currency=%s",
                        REPORTED_MARKER,
                        date,
                        r.breakType(),
                        r.reference(),
                        r.internalAmount(),
                        r.pspAmount(),
                        r.currency());
            }
        }
        for (Resolved r : resolved) {
            Log.infof(
                    "recon break resolved date=%s type=%s reference=%s: %s",
                    date, r.breakType(), r.reference(), r.resolution());
        }
        return new RunResult(RunResult.SUCCEEDED, runId, open.get("REPORTED"), summary);
    }

    /**
     * A payment we hold as UNKNOWN that the PSP settled as a charge of the same amount and currency was captured:
     * UNKNOWN → CAPTURED (guarded; the trigger audits it with actor 'reconciler'), the capture entries and the
     * PaymentCaptured event, in the run's transaction.
     */
    private int closeTheLoop(Connection c, LocalDate date) throws SQLException, JsonProcessingException {
        int captured = 0;
        for (SettledUnknown s : repository.settledUnknown(c)) {
            CapturedPayment payment = repository.captureUnknown(c, s);
            if (payment == null) {
                Log.infof("payment %s no longer UNKNOWN: left as it is", s.paymentId());
                continue;
            }
            repository.bookCapture(c, s, payment.merchantId(), date);
            PaymentCaptured event = PaymentCaptured.of(
                    UUID.fromString(s.paymentId()),
                    UUID.fromString(payment.merchantId()),
                    payment.orderId(),
                    s.amount(),
                    s.currency(),
                    s.pspReference(),
                    json.readValue(payment.metadataJson(), METADATA));
            repository.enqueueEvent(
                    c,
                    event.eventId().toString(),
                    PaymentCaptured.TYPE,
                    Topics.PAYMENT_EVENTS,
                    s.paymentId(),
                    json.writeValueAsString(event),
                    json.writeValueAsString(traceHeaders.current()));
            Log.infof(
                    "payment %s UNKNOWN -> CAPTURED: settled by the PSP as %s on %s",
                    s.paymentId(), s.pspReference(), date);
            captured++;
        }
        return captured;
    }

    /** Checks every line while streaming it into COPY; a bad line aborts the COPY and the transaction. */
    private long copy(Connection c, Stream<Numbered> lines, LocalDate date) throws SQLException {
        CopyIn copy = c.unwrap(PGConnection.class)
                .getCopyAPI()
                .copyIn("COPY psp_settlements (" + SettlementRows.COPY_COLUMNS + ") FROM STDIN");
        byte[] buffer = new byte[1 << 20];
        int used = 0;
        long count = 0;
        String day = date.toString();
        StringBuilder row = new StringBuilder(160);
        try {
            for (var it = lines.iterator(); it.hasNext(); ) {
                Numbered line = it.next();
                row.setLength(0);
                SettlementRows.append(row, day, line.lineNo(), line.line());
                if (used + row.length() > buffer.length) {
                    copy.writeToCopy(buffer, 0, used);
                    used = 0;
                }
                // Rows are printable ASCII (checked), so one char is one byte.
                for (int i = 0; i < row.length(); i++) {
                    buffer[used++] = (byte) row.charAt(i);
                }
                count++;
            }
            if (used > 0) {
                copy.writeToCopy(buffer, 0, used);
            }
            copy.endCopy();
            return count;
        } finally {
            if (copy.isActive()) {
                copy.cancelCopy();
            }
        }
    }

    private RunResult failed(Connection c, LocalDate date, Progress progress, Exception e) {
        String error = String.valueOf(e.getMessage());
        Long line = null;
        for (Throwable t = e; t != null && line == null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SettlementFormatException f) {
                line = f.lineNumber();
                error = f.getMessage();
            }
        }
        Log.errorf(e, "reconciliation of %s failed, nothing changed: %s", date, e.getMessage());
        Long runId = null;
        try {
            runId = repository.insertRun(c, date, RunResult.FAILED);
        } catch (SQLException recordFailure) {
            Log.errorf(recordFailure, "could not record the failed run of %s", date);
        }
        RunSummary summary = progress.summary(runId, null, RunResult.FAILED, error, line);
        if (runId != null) {
            try {
                repository.finishRun(c, runId, RunResult.FAILED, json.writeValueAsString(summary));
                c.commit();
            } catch (SQLException | JsonProcessingException recordFailure) {
                Log.errorf(recordFailure, "could not record the failed run of %s", date);
            }
        }
        return new RunResult(RunResult.FAILED, runId, 0, summary);
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
