package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import io.quarkus.arc.Arc;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * What a test may assert differently per PSP protocol: the capture, resolver and refund tests run with {@code
 * psp.provider=sandbox} (the sandbox protocol) and, in CI's phase "tests (psp.provider=stripe)", with {@code stripe}
 * against the sandbox's Stripe mode (same process, same fault knobs, clock and counters). Only what one protocol has
 * and the other has not goes through here: id prefixes, decline codes, the sandbox protocol's fault sources, and what a
 * look-up costs at the PSP.
 */
final class PspUnderTest {
    private PspUnderTest() {}

    /** {@code sandbox} or {@code stripe}: the adapter under test. */
    static String provider() {
        return ConfigProvider.getConfig().getValue("psp.provider", String.class);
    }

    static boolean stripe() {
        return "stripe".equals(provider());
    }

    /** The PSP's id of a charge: the sandbox protocol's {@code ch_…}, Stripe's PaymentIntent {@code pi_…}. */
    static String chargeIdPrefix() {
        return stripe() ? "pi_" : "ch_";
    }

    /** The decline code of {@code tok_chargeDeclined}: Stripe's test card declines as {@code generic_decline}. */
    static String declinedCode() {
        return stripe() ? "generic_decline" : "card_declined";
    }

    /** The code of a source the PSP does not know ({@code tok_noSuchToken}). */
    static String unknownSourceCode() {
        return stripe() ? "resource_missing" : "unknown_source";
    }

    /**
     * Requests one resolver look-up adds to the sandbox's {@code chargeRequests} counter: the sandbox protocol asks
     * with a GET (not counted), Stripe's look-up inside the key window is the same POST again with the same key.
     */
    static int lookupRequests() {
        return stripe() ? 1 : 0;
    }

    /**
     * The source of a charge the PSP records but answers too late ({@code charged}), or does not record and answers
     * 504 too late: the sandbox protocol's {@code tok_timeoutCaptured} / {@code tok_timeoutNotReceived}. Stripe mode
     * has no such test card: {@code tok_visa}, with the fault set by {@link #lostAnswer}.
     */
    static String lostAnswerSource(boolean charged) {
        return stripe() ? "tok_visa" : charged ? "tok_timeoutCaptured" : "tok_timeoutNotReceived";
    }

    /**
     * Runs {@code call} (a capture from {@link #lostAnswerSource}) so that its answer is lost: in Stripe mode with the
     * {@code timeoutRate} ({@code charged}) or {@code notReceivedRate} knob set for the call and reset after it.
     */
    static <T> T lostAnswer(String pspUrl, boolean charged, Supplier<T> call) {
        if (!stripe()) {
            return call.get();
        }
        Fixtures.faults(pspUrl, charged ? "{\"timeoutRate\":1.0}" : "{\"notReceivedRate\":1.0}");
        try {
            return call.get();
        } finally {
            TestSupport.psp(pspUrl).delete("/test/faults").then().statusCode(200);
        }
    }

    /**
     * Charges at the PSP directly through the service's {@link PspPort}, as our capture would (the payment id as the
     * key and reference, the same request), and expects a definite answer.
     */
    static ChargeResult charge(UUID paymentId, long amount, String currency, String source) {
        PspPort port = Arc.container().instance(PspPort.class).get();
        ChargeResult result = port.charge(new ChargeRequest(paymentId.toString(), amount, currency, source))
                .await()
                .atMost(Duration.ofSeconds(30));
        assertThat(result.status()).isIn(ChargeResult.Status.CAPTURED, ChargeResult.Status.DECLINED);
        return result;
    }

    static ChargeResult charge(UUID paymentId, long amount, String source) {
        return charge(paymentId, amount, "EUR", source);
    }
}
