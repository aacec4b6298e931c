package com.payments.psp.port;

import java.time.Instant;

/**
 * One money movement as the PSP booked it: the columns of the sandbox's settlement file (docs/architecture.md §5).
 *
 * @param pspReference the PSP's id of the moved object ({@code ch_…}, {@code re_…}, {@code dp_…}), or of the balance
 *     transaction for fees
 * @param type CHARGE, REFUND, CHARGEBACK, FEE or REFUND_FAILURE (a refund that failed after it was booked: its money
 *     came back)
 * @param reference our payment id (CHARGE, CHARGEBACK) or refund id (REFUND, REFUND_FAILURE); null when the PSP has
 *     none
 * @param amount positive minor units; the type gives the direction
 * @param fee what the PSP kept, minor units
 * @param currency ISO 4217, upper case
 * @param settledAt when the PSP booked it
 */
public record SettlementLine(
        String pspReference,
        String type,
        String reference,
        long amount,
        long fee,
        String currency,
        Instant settledAt) {}
