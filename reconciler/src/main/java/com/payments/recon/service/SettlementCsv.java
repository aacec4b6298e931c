package com.payments.recon.service;

import java.io.BufferedReader;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validates a settlement file (docs/architecture.md §5) line by line and turns each line into a row of PostgreSQL's COPY text
 * format for {@code psp_settlements}. Any malformed line throws {@link SettlementFormatException} with its line number.
 */
public final class SettlementCsv {
    public static final String HEADER = "psp_reference,type,reference,amount,fee,currency,settled_at";
    public static final String COPY_COLUMNS =
            "business_date, line_no, psp_reference, type, reference, amount, fee, currency, settled_at";

    private static final Set<String> TYPES = Set.of("CHARGE", "REFUND", "CHARGEBACK", "FEE");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final long MAX_AMOUNT = 1_000_000_000_000L;
    private static final int MAX_TEXT = 255;

    private SettlementCsv() {}

    /** Receives the COPY rows. */
    public interface RowSink {
        void accept(CharSequence row) throws IOException, SQLException;
    }

    /**
     * Reads the whole file, sending one COPY row per line to {@code sink}; returns the number of lines after the header.
     * {@code line_no} is the line's number in the file (the header is line 1).
     */
    public static long convert(BufferedReader in, LocalDate businessDate, RowSink sink)
            throws IOException, SQLException {
        String header = in.readLine();
        if (header == null) {
            throw new SettlementFormatException(1, "empty file, expected the header " + HEADER);
        }
        if (header.startsWith("\uFEFF")) {
            header = header.substring(1);
        }
        if (!HEADER.equals(stripCr(header))) {
            throw new SettlementFormatException(1, "expected the header " + HEADER);
        }
        String date = businessDate.toString();
        StringBuilder row = new StringBuilder(160);
        long lineNo = 1;
        long lines = 0;
        String line;
        while ((line = in.readLine()) != null) {
            lineNo++;
            row.setLength(0);
            appendRow(row, date, lineNo, stripCr(line));
            sink.accept(row);
            lines++;
        }
        return lines;
    }

    static void appendRow(StringBuilder row, String date, long lineNo, String line) {
        if (lineNo > Integer.MAX_VALUE) {
            throw new SettlementFormatException(lineNo, "too many lines");
        }
        List<String> f = split(line, lineNo);
        if (f.size() != 7) {
            throw new SettlementFormatException(lineNo, "expected 7 fields, found " + f.size());
        }
        String pspReference = text(f.get(0), "psp_reference", lineNo, true);
        String type = f.get(1);
        if (!TYPES.contains(type)) {
            throw new SettlementFormatException(lineNo, "type must be CHARGE, REFUND, CHARGEBACK or FEE");
        }
        // A FEE line need not be about one of our items; every other movement names our payment or refund id.
        String reference = text(f.get(2), "reference", lineNo, !"FEE".equals(type));
        long amount = number(f.get(3), "amount", lineNo);
        if ("FEE".equals(type) ? amount < 0 : amount <= 0) {
            throw new SettlementFormatException(lineNo, "amount out of range: " + amount);
        }
        long fee = number(f.get(4), "fee", lineNo);
        if (fee < 0) {
            throw new SettlementFormatException(lineNo, "fee must not be negative");
        }
        String currency = f.get(5);
        if (!CURRENCY.matcher(currency).matches()) {
            throw new SettlementFormatException(lineNo, "currency must be three upper-case letters");
        }
        Instant settledAt;
        try {
            settledAt = Instant.parse(f.get(6));
        } catch (DateTimeParseException e) {
            throw new SettlementFormatException(lineNo, "settled_at must be an ISO 8601 UTC instant");
        }
        row.append(date).append('\t').append(lineNo).append('\t');
        row.append(pspReference).append('\t').append(type).append('\t');
        row.append(reference.isEmpty() ? "\\N" : reference).append('\t');
        row.append(amount)
                .append('\t')
                .append(fee)
                .append('\t')
                .append(currency)
                .append('\t');
        row.append(settledAt).append('\n');
    }

    /** Comma-separated fields; a field may be double-quoted with {@code ""} for a quote inside. */
    static List<String> split(String line, long lineNo) {
        List<String> fields = new ArrayList<>(7);
        int i = 0;
        int n = line.length();
        while (true) {
            if (i < n && line.charAt(i) == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw new SettlementFormatException(lineNo, "unterminated quoted field");
                    }
                    char c = line.charAt(i++);
                    if (c == '"') {
                        if (i < n && line.charAt(i) == '"') {
                            sb.append('"');
                            i++;
                        } else {
                            break;
                        }
                    } else {
                        sb.append(c);
                    }
                }
                fields.add(sb.toString());
                if (i == n) {
                    return fields;
                }
                if (line.charAt(i) != ',') {
                    throw new SettlementFormatException(lineNo, "text after a quoted field");
                }
                i++;
            } else {
                int comma = line.indexOf(',', i);
                if (comma < 0) {
                    fields.add(line.substring(i));
                    return fields;
                }
                fields.add(line.substring(i, comma));
                i = comma + 1;
            }
        }
    }

    private static String text(String value, String name, long lineNo, boolean required) {
        if (value.isEmpty()) {
            if (required) {
                throw new SettlementFormatException(lineNo, name + " is empty");
            }
            return value;
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

    private static long number(String value, String name, long lineNo) {
        if (value.isEmpty() || value.length() > 13) {
            throw new SettlementFormatException(lineNo, name + " must be an integer in minor units");
        }
        long result = 0;
        int start = value.charAt(0) == '-' ? 1 : 0;
        if (start == value.length()) {
            throw new SettlementFormatException(lineNo, name + " must be an integer in minor units");
        }
        for (int i = start; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw new SettlementFormatException(lineNo, name + " must be an integer in minor units");
            }
            result = result * 10 + (c - '0');
        }
        if (result > MAX_AMOUNT) {
            throw new SettlementFormatException(lineNo, name + " above 10^12");
        }
        return start == 1 ? -result : result;
    }

    private static String stripCr(String line) {
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }
}
