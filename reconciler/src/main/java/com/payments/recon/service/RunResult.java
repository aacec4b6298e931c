package com.payments.recon.service;

/**
 * The outcome of one run for one business date.
 *
 * @param status SUCCEEDED, FAILED, or LOCKED (another run of the date holds the lock; nothing done)
 * @param runId the recon_runs row, null when LOCKED
 * @param reportedOpen breaks of the date in status REPORTED after the run
 * @param summary what the run printed and stored in recon_runs.summary
 */
public record RunResult(String status, Long runId, long reportedOpen, RunSummary summary) {
    public static final String SUCCEEDED = "SUCCEEDED";
    public static final String FAILED = "FAILED";
    public static final String LOCKED = "LOCKED";
}
