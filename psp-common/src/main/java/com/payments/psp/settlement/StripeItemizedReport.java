package com.payments.psp.settlement;

import com.payments.psp.port.SettlementLine;
import com.payments.psp.stripe.StripeCurrencies;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Stripe's itemized payout reconciliation report ({@code payout_reconciliation.itemized.5}, CSV), run with our
 * metadata columns: one balance transaction per line, amounts in major units ({@code 25.00}; Stripe's zero-decimal
 * currencies unscaled, three-decimal ones with three digits), read in ISO minor units, currencies lower case, times
 * {@code yyyy-MM-dd HH:mm:ss} UTC. Columns are found by name, so a report with more columns or another order reads the
 * same; {@link #REQUIRED} must be there.
 */
public final class StripeItemizedReport {
    /** The columns the reconciliation reads; the report must be run with the two metadata columns. */
    public static final List<String> REQUIRED = List.of(
            "balance_transaction_id",
            "created_utc",
            "currency",
            "gross",
            "fee",
            "reporting_category",
            "source_id",
            "payment_metadata[payment_id]",
            "refund_metadata[refund_id]");

    private static final DateTimeFormatter CREATED = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Map<String, Integer> columns = new HashMap<>();

    private StripeItemizedReport(Map<String, Integer> columns) {
        this.columns.putAll(columns);
    }

    /** Whether a header line is this report's (it has every {@link #REQUIRED} column). */
    public static boolean isHeader(String header) {
        return columnsOf(header).keySet().containsAll(REQUIRED);
    }

    /** The reader of the lines under {@code header}; fails on line 1 when a required column is missing. */
    public static StripeItemizedReport forHeader(String header) {
        Map<String, Integer> columns = columnsOf(header);
        for (String name : REQUIRED) {
            if (!columns.containsKey(name)) {
                throw new SettlementFormatException(
                        1, "the itemized payout reconciliation report has no column " + name);
            }
        }
        return new StripeItemizedReport(columns);
    }

    private static Map<String, Integer> columnsOf(String header) {
        Map<String, Integer> columns = new HashMap<>();
        List<String> names = Csv.split(Csv.stripBom(Csv.stripCr(header)), 1);
        for (int i = 0; i < names.size(); i++) {
            columns.putIfAbsent(names.get(i).trim(), i);
        }
        return columns;
    }

    /**
     * One line of the report; null for balance transactions the reconciliation does not match (payouts, transfers,
     * won disputes, …).
     */
    public SettlementLine parseLine(String line, long lineNo) {
        List<String> f = Csv.split(Csv.stripCr(line), lineNo);
        if (f.size() < columns.size()) {
            throw new SettlementFormatException(
                    lineNo, "expected " + columns.size() + " fields as in the header, found " + f.size());
        }
        String type = lineType(get(f, "reporting_category"));
        if (type == null) {
            return null;
        }
        String currency = get(f, "currency").toUpperCase(Locale.ROOT);
        Instant created;
        try {
            created = LocalDateTime.parse(get(f, "created_utc"), CREATED).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw new SettlementFormatException(lineNo, "created_utc must look like 2031-04-02 12:00:00");
        }
        String source = get(f, "source_id");
        String reference =
                switch (type) {
                    case "CHARGE", "CHARGEBACK" -> get(f, "payment_metadata[payment_id]");
                    case "REFUND", "REFUND_FAILURE" -> get(f, "refund_metadata[refund_id]");
                    default -> "";
                };
        String paymentIntent = get(f, "payment_intent_id");
        String pspReference =
                switch (type) {
                    case "CHARGE" -> paymentIntent.isEmpty() ? source : paymentIntent;
                    case "FEE" -> get(f, "balance_transaction_id");
                    default -> source;
                };
        return new SettlementLine(
                pspReference,
                type,
                reference.isEmpty() ? null : reference,
                // the type gives the direction; a fee debits the balance, and a fee credit stays negative (refused)
                "FEE".equals(type)
                        ? -minor(get(f, "gross"), currency, "gross", lineNo)
                        : Math.abs(minor(get(f, "gross"), currency, "gross", lineNo)),
                minor(get(f, "fee"), currency, "fee", lineNo),
                currency,
                created);
    }

    /**
     * Our line type of a Stripe {@code reporting_category} (the same for balance transactions and the report): null
     * for the categories the reconciliation does not match.
     */
    public static String lineType(String reportingCategory) {
        return switch (reportingCategory == null ? "" : reportingCategory) {
            case "charge" -> "CHARGE";
            case "refund" -> "REFUND";
            case "refund_failure" -> "REFUND_FAILURE";
            case "dispute" -> "CHARGEBACK";
            case "fee" -> "FEE";
            default -> null; // payout, transfer, dispute_reversal, …: not ours to match
        };
    }

    /**
     * Major units as the report prints them ({@code -25.00}, {@code 5000} JPY, {@code 5.120} KWD) in ISO minor units
     * of the currency ({@link StripeCurrencies#isoDigits}); exact, or the line is malformed.
     */
    static long minor(String major, String currency, String name, long lineNo) {
        try {
            BigDecimal value = new BigDecimal(major).movePointRight(StripeCurrencies.isoDigits(currency));
            if (value.abs().compareTo(BigDecimal.valueOf(1_000_000_000_000L)) > 0) {
                throw new SettlementFormatException(lineNo, name + " above 10^12 minor units");
            }
            return value.longValueExact();
        } catch (NumberFormatException | ArithmeticException e) {
            throw new SettlementFormatException(
                    lineNo, name + " must be an amount in " + currency + " units: " + major);
        }
    }

    private String get(List<String> fields, String column) {
        Integer i = columns.get(column);
        return i == null ? "" : fields.get(i).trim();
    }
}
