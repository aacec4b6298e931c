package com.payments.recon.service;

/** A settlement file line that does not follow docs/architecture.md §5; the run fails and loads nothing. */
public class SettlementFormatException extends RuntimeException {
    private final long lineNumber;

    public SettlementFormatException(long lineNumber, String message) {
        super("settlement file line " + lineNumber + ": " + message);
        this.lineNumber = lineNumber;
    }

    /** 1-based line number in the file (the header is line 1). */
    public long lineNumber() {
        return lineNumber;
    }
}
