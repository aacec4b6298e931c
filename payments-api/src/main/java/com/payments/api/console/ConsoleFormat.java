package com.payments.api.console;

import io.quarkus.qute.TemplateExtension;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Currency;

/**
 * Formatting for the console's templates, null-safe: {@code {fmt:utc(t)}}, {@code {fmt:age(t)}},
 * {@code {fmt:money(amount, currency)}}.
 */
@TemplateExtension(namespace = "fmt")
public final class ConsoleFormat {
    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'");

    private ConsoleFormat() {}

    /** The instant in UTC to the second, or "-" for none. */
    static String utc(OffsetDateTime time) {
        return time == null ? "-" : UTC.format(time.withOffsetSameInstant(ZoneOffset.UTC));
    }

    /** How long ago, coarsely: "45s", "12m", "3h 5m", "2d 4h"; "-" for none. */
    static String age(OffsetDateTime time) {
        if (time == null) {
            return "-";
        }
        long s = Math.max(0, Duration.between(time, OffsetDateTime.now()).toSeconds());
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return s / 60 + "m";
        }
        if (s < 86400) {
            return s / 3600 + "h " + s % 3600 / 60 + "m";
        }
        return s / 86400 + "d " + s % 86400 / 3600 + "h";
    }

    /**
     * Minor units as a decimal amount in the currency's own digits, e.g. 2500 EUR → "25.00 EUR", 2500 JPY → "2500
     * JPY"; "-" for none.
     */
    static String money(Long minor, String currency) {
        if (minor == null) {
            return "-";
        }
        int digits = 2;
        try {
            digits = Math.max(0, Currency.getInstance(currency).getDefaultFractionDigits());
        } catch (IllegalArgumentException | NullPointerException e) {
            // unknown code: two decimals
        }
        return BigDecimal.valueOf(minor, digits).toPlainString() + " " + (currency == null ? "" : currency);
    }
}
