package com.payments.api.payment;

import com.payments.api.common.Refusal;
import com.payments.psp.port.AmountRefusal;

/** The amounts a payment or a refund may have, in the currency's minor unit (docs/api.md: 1 ≤ amount ≤ 10^12). */
public final class AmountLimits {
    public static final long MIN = 1;
    public static final long MAX = 1_000_000_000_000L;

    private AmountLimits() {}

    /**
     * Refuses, before anything is stored, an amount the active PSP cannot take (docs/api.md, Errors): {@code
     * currency_not_supported_by_psp} or {@code amount_not_supported_by_psp}, 422.
     *
     * @param refusal what the PSP said of the amount ({@link com.payments.api.client.PspGateway#refusal}); null: taken
     */
    public static void requireTakenByPsp(AmountRefusal refusal) {
        if (refusal == null) {
            return;
        }
        throw switch (refusal) {
            case CURRENCY_NOT_SUPPORTED ->
                new Refusal(
                        Refusal.Kind.UNPROCESSABLE,
                        "currency_not_supported_by_psp",
                        "Currency not supported by the payment provider",
                        "The payment provider does not take this currency; nothing was stored",
                        null);
            case AMOUNT_NOT_REPRESENTABLE ->
                new Refusal(
                        Refusal.Kind.UNPROCESSABLE,
                        "amount_not_supported_by_psp",
                        "Amount not supported by the payment provider",
                        "The payment provider cannot take this amount in this currency (e.g. whole units only, or a"
                                + " last digit of 0 for three-decimal currencies); nothing was stored",
                        null);
        };
    }
}
