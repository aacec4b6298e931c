package com.payments.recon.service;

import com.payments.psp.port.SettlementLine;
import com.payments.psp.settlement.SettlementFormatException;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a settlement line for {@code psp_settlements}, whatever its source, and writes it as a row of PostgreSQL's
 * COPY text format. A line that breaks a rule throws {@link SettlementFormatException} with its number.
 */
public final class SettlementRows {
    public static final String COPY_COLUMNS =
            "business_date, line_no, psp_reference, type, reference, amount, fee, currency, settled_at";

    private static final Set<String> TYPES = Set.of("CHARGE", "REFUND", "CHARGEBACK", "FEE", "REFUND_FAILURE");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final long MAX_AMOUNT = 1_000_000_000_000L;
    private static final int MAX_TEXT = 255;

    private SettlementRows() {}

    /**
     * Appends the COPY row of {@code line}. A movement without our id (a Stripe charge made outside the platform, which
     * has none of our metadata) takes the PSP's id as its reference: it names nothing we hold, so it is a
     * MISSING_INTERNAL break rather than a line the run cannot load.
     */
    public static void append(StringBuilder row, String date, long lineNo, SettlementLine line) {
        if (lineNo > Integer.MAX_VALUE) {
            throw new SettlementFormatException(lineNo, "too many lines");
        }
        String pspReference = text(line.pspReference(), "psp_reference", lineNo);
        String type = line.type();
        if (!TYPES.contains(type)) {
            throw new SettlementFormatException(
                    lineNo, "type must be CHARGE, REFUND, CHARGEBACK, FEE or REFUND_FAILURE, not " + type);
        }
        boolean fee = "FEE".equals(type);
        String reference = line.reference() == null || line.reference().isEmpty()
                ? (fee ? null : pspReference)
                : text(line.reference(), "reference", lineNo);
        long amount = line.amount();
        if ((fee ? amount < 0 : amount <= 0) || amount > MAX_AMOUNT) {
            throw new SettlementFormatException(lineNo, "amount out of range: " + amount);
        }
        if (line.fee() < 0 || line.fee() > MAX_AMOUNT) {
            throw new SettlementFormatException(lineNo, "fee must not be negative nor above 10^12: " + line.fee());
        }
        if (line.currency() == null || !CURRENCY.matcher(line.currency()).matches()) {
            throw new SettlementFormatException(lineNo, "currency must be three upper-case letters");
        }
        if (line.settledAt() == null) {
            throw new SettlementFormatException(lineNo, "settled_at is missing");
        }
        row.append(date).append('\t').append(lineNo).append('\t');
        row.append(pspReference).append('\t').append(type).append('\t');
        row.append(reference == null ? "\\N" : reference).append('\t');
        row.append(amount).append('\t').append(line.fee()).append('\t');
        row.append(line.currency()).append('\t');
        row.append(line.settledAt()).append('\n');
    }

    private static String text(String value, String name, long lineNo) {
        if (value == null || value.isEmpty()) {
            throw new SettlementFormatException(lineNo, name + " is empty");
        }
        if (value.length() > MAX_TEXT) {
            throw new SettlementFormatException(lineNo, name + " longer than " + MAX_TEXT + " characters");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            // Printable ASCII only: also keeps the COPY text format free of escapes.
            if (c < 0x21 || c > 0x7e || c == '\\') {
                throw new SettlementFormatException(lineNo, name + " has a character outside printable ASCII");
            }
        }
        return value;
    }
}
