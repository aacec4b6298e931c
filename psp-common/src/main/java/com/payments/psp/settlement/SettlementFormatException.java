package com.payments.psp.settlement;

/** A settlement line that does not follow its format; the reconciler's run fails and loads nothing. */
public class SettlementFormatException extends RuntimeException {
    private final long lineNumber;

    public SettlementFormatException(long lineNumber, String message) {
        super("settlement line " + lineNumber + ": " + message);
        this.lineNumber = lineNumber;
    }

    /** 1-based: a file's line number (its header is line 1), or the position in the PSP's list of lines. */
    public long lineNumber() {
        return lineNumber;
    }
}
