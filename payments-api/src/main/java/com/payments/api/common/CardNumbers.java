package com.payments.api.common;

import java.util.regex.Pattern;

/**
 * The one definition of "looks like a card number" (docs/architecture.md §1: no card data is accepted, stored or logged): 13
 * to 19 digits, written in one piece or in groups separated by spaces or dashes, with no digit directly before or
 * after them, that pass the Luhn check. The digits may sit anywhere in a longer text ({@code "INV 4242 4242 4242
 * 4242"}, {@code "12-4242424242424242"}); a longer unbroken digit string is not a card number, nor is a Luhn-invalid
 * one.
 *
 * <p>A UUID ({@code 8-4-4-4-12} hex digits) is no card number: its dash-separated groups of digits would look like
 * one for about 1 random UUID in 350, and merchants use UUIDs as order ids. UUID-shaped parts of a text are skipped.
 */
public final class CardNumbers {
    private static final int MIN_DIGITS = 13;
    private static final int MAX_DIGITS = 19;
    private static final Pattern UUID_SHAPED = Pattern.compile(
            "(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f])");

    private CardNumbers() {}

    /** Whether {@code text} contains a card number as defined above. */
    public static boolean containedIn(CharSequence value) {
        CharSequence text = UUID_SHAPED.matcher(value).replaceAll("_");
        int n = text.length();
        int i = 0;
        while (i < n) {
            if (!isDigit(text.charAt(i))) {
                i++;
                continue;
            }
            // A run of digit groups joined by spaces or dashes starts at i; try every group boundary in it as a start.
            if (startsCardNumber(text, i)) {
                return true;
            }
            while (i < n && isDigit(text.charAt(i))) {
                i++;
            }
            while (i < n && isSeparator(text.charAt(i))) {
                i++;
            }
        }
        return false;
    }

    /**
     * Whether the digits read from {@code start} (the first digit of a group), skipping separators, reach 13 to 19
     * digits at the end of some group and pass the Luhn check there.
     */
    private static boolean startsCardNumber(CharSequence text, int start) {
        int[] digits = new int[MAX_DIGITS];
        int count = 0;
        int i = start;
        int n = text.length();
        while (i < n && count <= MAX_DIGITS) {
            char c = text.charAt(i);
            if (isDigit(c)) {
                if (count == MAX_DIGITS) {
                    return false; // the group goes on past 19 digits
                }
                digits[count++] = c - '0';
                i++;
                boolean groupEnds = i == n || !isDigit(text.charAt(i));
                if (groupEnds && count >= MIN_DIGITS && luhn(digits, count)) {
                    return true;
                }
            } else if (isSeparator(c) && count > 0) {
                i++;
            } else {
                return false;
            }
        }
        return false;
    }

    private static boolean luhn(int[] digits, int count) {
        int sum = 0;
        for (int k = 0; k < count; k++) {
            int d = digits[count - 1 - k];
            if (k % 2 == 1) {
                d *= 2;
                if (d > 9) {
                    d -= 9;
                }
            }
            sum += d;
        }
        return sum % 10 == 0;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isSeparator(char c) {
        return c == ' ' || c == '-';
    }
}
