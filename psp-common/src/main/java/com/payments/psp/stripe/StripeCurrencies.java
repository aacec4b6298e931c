package com.payments.psp.stripe;

import com.payments.psp.port.AmountRefusal;
import java.math.BigDecimal;
import java.util.Currency;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Stripe's amount units per currency, the one table the adapter converts by. Our amounts are ISO 4217 minor units (the
 * JDK's {@link Currency#getDefaultFractionDigits()}, as the API validates them); Stripe's {@code amount} is in the
 * currency's unit as Stripe defines it, which is not always ISO's.
 *
 * <p>Source: Stripe, "Supported currencies", https://docs.stripe.com/currencies (read 2026-12): the presentment
 * currencies, "Zero-decimal currencies", "Three-decimal currencies" and "Special cases". Where Stripe's page
 * contradicts itself (UGX is in its zero-decimal list and, under "Special cases", "a two-decimal value, where the
 * decimal amount is always 00"), the special case rules: it is the later, specific rule, and charges as integrations
 * report them follow it (docs/stripe.md, "Currencies"). HUF and TWD are zero-decimal at Stripe for payouts only;
 * their charges and refunds are two-decimal, as ISO's. The presentment list is Stripe's card currencies; one Stripe
 * adds later is refused here until it is added.
 */
public final class StripeCurrencies {

    /** Stripe's largest {@code amount} of a card payment: 12 digits. */
    static final long MAX_STRIPE_AMOUNT = 999_999_999_999L;

    /** Zero-decimal at Stripe (an {@code amount} of 500 JPY is 500). */
    private static final Set<String> ZERO_DECIMAL = Set.of(
            "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "VND", "VUV", "XAF", "XOF", "XPF");

    /** Three-decimal at Stripe; the last digit of an amount must be 0. */
    private static final Set<String> THREE_DECIMAL = Set.of("BHD", "JOD", "KWD", "OMR", "TND");

    /** Two-decimal at Stripe although whole units only: the amount must be divisible by 100 (5 ISK is 500). */
    private static final Set<String> WHOLE_UNITS_IN_HUNDREDTHS = Set.of("ISK", "UGX");

    /** Every other presentment currency Stripe lists is two-decimal. */
    private static final Set<String> TWO_DECIMAL = Set.of(
            "USD", "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN",
            "BMD", "BND", "BOB", "BRL", "BSD", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CNY", "COP", "CRC", "CVE",
            "CZK", "DKK", "DOP", "DZD", "EGP", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GIP", "GMD", "GTQ", "GYD",
            "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "JMD", "KES", "KGS", "KHR", "KYD", "KZT", "LAK", "LBP",
            "LKR", "LRD", "LSL", "MAD", "MDL", "MKD", "MMK", "MNT", "MOP", "MUR", "MVR", "MWK", "MXN", "MYR", "MZN",
            "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD",
            "RUB", "SAR", "SBD", "SCR", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SZL", "THB", "TJS", "TOP", "TRY",
            "TTD", "TWD", "TZS", "UAH", "UYU", "UZS", "WST", "XCD", "YER", "ZAR", "ZMW");

    /** A currency's unit at Stripe: its decimal digits and the step an amount must be a multiple of. */
    private record Unit(int digits, long step) {}

    private static final Map<String, Unit> UNITS = Stream.of(
                    ZERO_DECIMAL.stream().map(c -> Map.entry(c, new Unit(0, 1))),
                    THREE_DECIMAL.stream().map(c -> Map.entry(c, new Unit(3, 10))),
                    WHOLE_UNITS_IN_HUNDREDTHS.stream().map(c -> Map.entry(c, new Unit(2, 100))),
                    TWO_DECIMAL.stream().map(c -> Map.entry(c, new Unit(2, 1))))
            .flatMap(s -> s)
            .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));

    private StripeCurrencies() {}

    /** Whether Stripe takes the currency (ISO 4217, any case) and the JDK knows its minor unit. */
    public static boolean supported(String currency) {
        if (currency == null || !UNITS.containsKey(upper(currency))) {
            return false;
        }
        try {
            isoDigits(currency);
            return true;
        } catch (ArithmeticException e) {
            return false;
        }
    }

    /** Null when Stripe can take {@code isoAmount} (ISO minor units, positive) of the currency, else why not. */
    public static AmountRefusal refusal(long isoAmount, String currency) {
        if (!supported(currency)) {
            return AmountRefusal.CURRENCY_NOT_SUPPORTED;
        }
        try {
            toStripe(isoAmount, currency);
            return null;
        } catch (ArithmeticException e) {
            return AmountRefusal.AMOUNT_NOT_REPRESENTABLE;
        }
    }

    /**
     * ISO minor units as Stripe's {@code amount}.
     *
     * @throws ArithmeticException when Stripe cannot represent the amount (finer than Stripe's unit, not a multiple of
     *     its step, or more than 12 digits), or does not take the currency
     */
    public static long toStripe(long isoAmount, String currency) {
        Unit unit = unit(currency);
        long stripe = BigDecimal.valueOf(isoAmount)
                .movePointRight(unit.digits() - isoDigits(currency))
                .longValueExact();
        if (stripe % unit.step() != 0 || Math.abs(stripe) > MAX_STRIPE_AMOUNT) {
            throw new ArithmeticException(currency + " amount not representable at Stripe");
        }
        return stripe;
    }

    /**
     * Stripe's {@code amount} in ISO minor units.
     *
     * @throws ArithmeticException when it is finer than the ISO minor unit (no exact value of ours), or the currency is
     *     not one Stripe takes
     */
    public static long toIso(long stripeAmount, String currency) {
        return BigDecimal.valueOf(stripeAmount)
                .movePointRight(isoDigits(currency) - unit(currency).digits())
                .longValueExact();
    }

    /**
     * The ISO minor units of the currency (the JDK's), for amounts printed in major units (Stripe's reports).
     *
     * @throws ArithmeticException for a currency without minor units or unknown to the JDK
     */
    public static int isoDigits(String currency) {
        try {
            int digits = Currency.getInstance(upper(currency)).getDefaultFractionDigits();
            if (digits < 0) {
                throw new ArithmeticException(currency + " has no minor unit");
            }
            return digits;
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new ArithmeticException("unknown currency " + currency);
        }
    }

    private static Unit unit(String currency) {
        Unit unit = currency == null ? null : UNITS.get(upper(currency));
        if (unit == null) {
            throw new ArithmeticException("Stripe does not take " + currency);
        }
        return unit;
    }

    private static String upper(String currency) {
        return currency.toUpperCase(Locale.ROOT);
    }
}
