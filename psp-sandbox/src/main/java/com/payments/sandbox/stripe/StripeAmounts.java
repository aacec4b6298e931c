package com.payments.sandbox.stripe;

import com.payments.sandbox.Reply;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.Set;

/**
 * Stripe's rules for an {@code amount} in a currency, as Stripe's API applies them (https://docs.stripe.com/currencies:
 * presentment currencies, zero- and three-decimal currencies, special cases): the currency must be one Stripe takes;
 * ISK and UGX are two-decimal but whole units only (divisible by 100); a three-decimal amount ends in 0. Written
 * from Stripe's side and kept apart from the adapter's table (psp-common {@code StripeCurrencies}), so that a wrong
 * conversion there is refused here as Stripe would refuse it.
 */
final class StripeAmounts {

    private static final Set<String> ZERO_DECIMAL = Set.of(
            "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "vnd", "vuv", "xaf", "xof", "xpf");
    private static final Set<String> THREE_DECIMAL = Set.of("bhd", "jod", "kwd", "omr", "tnd");
    private static final Set<String> WHOLE_UNITS = Set.of("isk", "ugx");
    private static final Set<String> TWO_DECIMAL = Set.of(
            "usd", "aed", "afn", "all", "amd", "ang", "aoa", "ars", "aud", "awg", "azn", "bam", "bbd", "bdt", "bgn",
            "bmd", "bnd", "bob", "brl", "bsd", "bwp", "byn", "bzd", "cad", "cdf", "chf", "cny", "cop", "crc", "cve",
            "czk", "dkk", "dop", "dzd", "egp", "etb", "eur", "fjd", "fkp", "gbp", "gel", "gip", "gmd", "gtq", "gyd",
            "hkd", "hnl", "htg", "huf", "idr", "ils", "inr", "jmd", "kes", "kgs", "khr", "kyd", "kzt", "lak", "lbp",
            "lkr", "lrd", "lsl", "mad", "mdl", "mkd", "mmk", "mnt", "mop", "mur", "mvr", "mwk", "mxn", "myr", "mzn",
            "nad", "ngn", "nio", "nok", "npr", "nzd", "pab", "pen", "pgk", "php", "pkr", "pln", "qar", "ron", "rsd",
            "rub", "sar", "sbd", "scr", "sek", "sgd", "shp", "sle", "sos", "srd", "szl", "thb", "tjs", "top", "try",
            "ttd", "twd", "tzs", "uah", "uyu", "uzs", "wst", "xcd", "yer", "zar", "zmw");

    private StripeAmounts() {}

    static boolean supported(String currency) {
        String c = currency.toLowerCase(Locale.ROOT);
        return ZERO_DECIMAL.contains(c)
                || THREE_DECIMAL.contains(c)
                || WHOLE_UNITS.contains(c)
                || TWO_DECIMAL.contains(c);
    }

    /** Stripe's 400 for a currency it does not take; null when it takes it. */
    static Reply currencyError(String currency) {
        return supported(currency)
                ? null
                : StripeErrors.invalid(
                        null,
                        "Invalid currency: " + currency.toLowerCase(Locale.ROOT)
                                + ". Stripe currently supports these currencies:"
                                + " see https://stripe.com/docs/currencies",
                        "currency");
    }

    /** Stripe's 400 for an amount its rules refuse in the (supported) currency; null when it takes it. */
    static Reply amountError(long amount, String currency) {
        String c = currency.toLowerCase(Locale.ROOT);
        if (WHOLE_UNITS.contains(c) && amount % 100 != 0) {
            return StripeErrors.invalid(
                    "invalid_charge_amount_no_decimal_compatible",
                    "Invalid amount. Currency " + c.toUpperCase(Locale.ROOT) + " has become effectively zero-decimal"
                            + " and charged amounts must be evenly divisible by 100. See"
                            + " https://stripe.com/docs/currencies#special-cases for more information.",
                    "amount");
        }
        if (THREE_DECIMAL.contains(c) && amount % 10 != 0) {
            return StripeErrors.invalid(
                    null,
                    "Invalid amount. Amounts in " + c.toUpperCase(Locale.ROOT)
                            + " must be rounded to the nearest ten: the last digit must be 0. See"
                            + " https://stripe.com/docs/currencies#three-decimal for more information.",
                    "amount");
        }
        return null;
    }

    /** A fee in the currency's unit: whole krónur and shillings (a multiple of 100) for ISK and UGX. */
    static long fee(long fee, String currency) {
        return WHOLE_UNITS.contains(currency.toLowerCase(Locale.ROOT)) ? (fee + 50) / 100 * 100 : fee;
    }

    /** Minor units as Stripe's reports print them: {@code 2500 eur} is {@code 25.00}, {@code 5120 kwd} {@code 5.120}. */
    static String major(long minor, String currency) {
        String c = currency.toLowerCase(Locale.ROOT);
        int digits = ZERO_DECIMAL.contains(c) ? 0 : THREE_DECIMAL.contains(c) ? 3 : 2;
        return BigDecimal.valueOf(minor, digits).toPlainString();
    }
}
