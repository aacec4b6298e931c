package com.payments.psp.settlement;

import com.payments.psp.port.SettlementLine;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;

/**
 * The sandbox protocol's settlement file (docs/architecture.md §5): the header {@link #HEADER}, then one movement per
 * line. Every movement but a FEE names our payment or refund id.
 */
public final class SandboxSettlementFile {
    public static final String HEADER = "psp_reference,type,reference,amount,fee,currency,settled_at";

    private static final Set<String> TYPES = Set.of("CHARGE", "REFUND", "CHARGEBACK", "FEE");

    private SandboxSettlementFile() {}

    /** One line after the header; {@code lineNo} for the error message. */
    public static SettlementLine parseLine(String line, long lineNo) {
        List<String> f = Csv.split(Csv.stripCr(line), lineNo);
        if (f.size() != 7) {
            throw new SettlementFormatException(lineNo, "expected 7 fields, found " + f.size());
        }
        String type = f.get(1);
        if (!TYPES.contains(type)) {
            throw new SettlementFormatException(lineNo, "type must be CHARGE, REFUND, CHARGEBACK or FEE");
        }
        String reference = f.get(2);
        if (reference.isEmpty() && !"FEE".equals(type)) {
            throw new SettlementFormatException(lineNo, "reference is empty");
        }
        Instant settledAt;
        try {
            settledAt = Instant.parse(f.get(6));
        } catch (DateTimeParseException e) {
            throw new SettlementFormatException(lineNo, "settled_at must be an ISO 8601 UTC instant");
        }
        return new SettlementLine(
                f.get(0),
                type,
                reference.isEmpty() ? null : reference,
                integer(f.get(3), "amount", lineNo),
                integer(f.get(4), "fee", lineNo),
                f.get(5),
                settledAt);
    }

    /** An integer in minor units, at most 10^12 in size. */
    static long integer(String value, String name, long lineNo) {
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
        if (result > 1_000_000_000_000L) {
            throw new SettlementFormatException(lineNo, name + " above 10^12");
        }
        return start == 1 ? -result : result;
    }
}
