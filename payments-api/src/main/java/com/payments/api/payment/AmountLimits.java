package com.payments.api.payment;

/** The amounts a payment or a refund may have, in the currency's minor unit (docs/api.md: 1 ≤ amount ≤ 10^12). */
public final class AmountLimits {
    public static final long MIN = 1;
    public static final long MAX = 1_000_000_000_000L;

    private AmountLimits() {}
}
