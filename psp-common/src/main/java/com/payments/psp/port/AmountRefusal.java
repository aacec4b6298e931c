package com.payments.psp.port;

/** Why a PSP cannot take an amount ({@link PspPort#refusal}): checked before anything is stored. */
public enum AmountRefusal {
    /** The PSP does not take this currency. */
    CURRENCY_NOT_SUPPORTED,
    /** The PSP cannot represent this amount in this currency (e.g. Stripe: ISK in whole krónur, KWD ending in 0). */
    AMOUNT_NOT_REPRESENTABLE
}
