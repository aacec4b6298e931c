package com.payments.psp.stripe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.psp.port.AmountRefusal;
import org.junit.jupiter.api.Test;

/** The table of Stripe's units against ISO 4217 minor units (docs/stripe.md, "Currencies"). */
class StripeCurrenciesTest {

    @Test
    void isoMinorUnitsBecomeStripesAndBack() {
        assertThat(StripeCurrencies.toStripe(2500, "EUR")).isEqualTo(2500);
        assertThat(StripeCurrencies.toStripe(5000, "JPY")).isEqualTo(5000);
        assertThat(StripeCurrencies.toStripe(5000, "ISK")).as("5,000 krónur").isEqualTo(500_000);
        assertThat(StripeCurrencies.toStripe(5000, "UGX")).isEqualTo(500_000);
        assertThat(StripeCurrencies.toStripe(500_000, "MGA"))
                .as("5,000.00 ariary")
                .isEqualTo(5000);
        assertThat(StripeCurrencies.toStripe(5120, "KWD")).isEqualTo(5120);
        assertThat(StripeCurrencies.toStripe(1045, "HUF"))
                .as("two-decimal for charges")
                .isEqualTo(1045);
        assertThat(StripeCurrencies.toStripe(1, "usd")).isEqualTo(1);

        assertThat(StripeCurrencies.toIso(500_000, "isk")).isEqualTo(5000);
        assertThat(StripeCurrencies.toIso(5000, "mga")).isEqualTo(500_000);
        assertThat(StripeCurrencies.toIso(-5120, "kwd")).isEqualTo(-5120);
        assertThatThrownBy(() -> StripeCurrencies.toIso(500_050, "isk")).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void whatStripeCannotTakeIsRefusedWithItsReason() {
        assertThat(StripeCurrencies.refusal(1235, "KWD")).isEqualTo(AmountRefusal.AMOUNT_NOT_REPRESENTABLE);
        assertThat(StripeCurrencies.refusal(1230, "KWD")).isNull();
        assertThat(StripeCurrencies.refusal(500_050, "MGA"))
                .as("5,000.50 ariary")
                .isEqualTo(AmountRefusal.AMOUNT_NOT_REPRESENTABLE);
        assertThat(StripeCurrencies.refusal(12_345, "ISK")).isNull();
        assertThat(StripeCurrencies.refusal(1_000_000_000_000L, "EUR"))
                .as("13 digits at Stripe")
                .isEqualTo(AmountRefusal.AMOUNT_NOT_REPRESENTABLE);
        assertThat(StripeCurrencies.refusal(10_000_000_000L, "ISK"))
                .as("10^10 krónur are 10^12 at Stripe")
                .isEqualTo(AmountRefusal.AMOUNT_NOT_REPRESENTABLE);
        assertThat(StripeCurrencies.refusal(1000, "IRR")).isEqualTo(AmountRefusal.CURRENCY_NOT_SUPPORTED);
        assertThat(StripeCurrencies.refusal(1000, "IQD")).isEqualTo(AmountRefusal.CURRENCY_NOT_SUPPORTED);
        assertThat(StripeCurrencies.refusal(1000, "XAU")).isEqualTo(AmountRefusal.CURRENCY_NOT_SUPPORTED);
    }

    @Test
    void theReportsMajorUnitsUseIsoDigits() {
        assertThat(StripeCurrencies.isoDigits("JPY")).isZero();
        assertThat(StripeCurrencies.isoDigits("isk")).isZero();
        assertThat(StripeCurrencies.isoDigits("MGA")).isEqualTo(2);
        assertThat(StripeCurrencies.isoDigits("KWD")).isEqualTo(3);
        assertThatThrownBy(() -> StripeCurrencies.isoDigits("XXX")).isInstanceOf(ArithmeticException.class);
    }
}
