package com.payments.psp.stripe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.SettlementLine;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Amounts Stripe sends us (events, PaymentIntents, balance transactions) read in ISO 4217 minor units. */
class StripeAmountMappingTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void aBalanceTransactionOfAZeroDecimalIsoCurrencyIsReadInIsoUnits() throws Exception {
        // 5,000 ISK charged, 150 ISK fee: Stripe writes the krona in hundredths
        SettlementLine line = StripeMapping.settlementLine(
                json(
                        """
                {"id":"txn_1","object":"balance_transaction","amount":500000,"fee":15000,"currency":"isk",
                 "created":1900000000,"reporting_category":"charge",
                 "source":{"id":"ch_1","object":"charge","payment_intent":{"id":"pi_1","metadata":{"payment_id":"pay-1"}}}}
                """));

        assertThat(line)
                .isEqualTo(new SettlementLine(
                        "pi_1", "CHARGE", "pay-1", 5000, 150, "ISK", Instant.ofEpochSecond(1_900_000_000L)));
    }

    @Test
    void aBalanceTransactionOfAStripeZeroDecimalCurrencyIsReadInIsoUnits() throws Exception {
        // MGA: zero-decimal at Stripe, two ISO minor units
        SettlementLine line = StripeMapping.settlementLine(
                json(
                        """
                {"id":"txn_2","object":"balance_transaction","amount":-2000,"fee":0,"currency":"mga",
                 "created":1900000000,"reporting_category":"refund",
                 "source":{"id":"re_2","object":"refund","metadata":{"refund_id":"ref-2"}}}
                """));

        assertThat(line.amount()).isEqualTo(200_000);
        assertThat(line.currency()).isEqualTo("MGA");
    }

    @Test
    void aRefundEventOfAnIskRefundIsReadInKronur() throws Exception {
        PspEvent event = StripeMapping.parse(
                json(
                        """
                {"id":"evt_1","object":"event","created":1900000000,"type":"refund.updated",
                 "data":{"object":{"id":"re_1","object":"refund","amount":250000,"currency":"isk",
                  "metadata":{"refund_id":"ref-1","payment_id":"pay-1"},"payment_intent":"pi_1","status":"succeeded"}}}
                """));

        assertThat(event.type()).isEqualTo(PspEvent.Type.REFUND_SUCCEEDED);
        assertThat(event.amount()).isEqualTo(2500);
        assertThat(event.currency()).isEqualTo("ISK");
    }

    @Test
    void aPaymentIntentOfAThreeDecimalCurrencyKeepsItsAmountAndAnMgaOneIsScaled() throws Exception {
        ChargeResult kwd = StripePsp.intentOutcome(
                json(
                        """
                {"id":"pi_1","object":"payment_intent","amount":5120,"currency":"kwd","status":"succeeded"}
                """));
        ChargeResult mga = StripePsp.intentOutcome(
                json(
                        """
                {"id":"pi_2","object":"payment_intent","amount":5000,"currency":"mga","status":"succeeded"}
                """));

        assertThat(kwd.amount()).isEqualTo(5120);
        assertThat(mga.amount()).isEqualTo(500_000);
        assertThat(mga.currency()).isEqualTo("MGA");
    }

    private static JsonNode json(String text) throws Exception {
        return MAPPER.readTree(text);
    }
}
