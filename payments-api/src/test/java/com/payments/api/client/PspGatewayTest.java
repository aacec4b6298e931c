package com.payments.api.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.api.client.PspCharge.PspError;
import org.junit.jupiter.api.Test;

/** How a PSP answer to a charge is read: a refusal is FAILED only when the PSP surely holds no charge for the key. */
class PspGatewayTest {

    @Test
    void succeededAndDeclinedChargesAreDefinite() {
        assertThat(PspGateway.toResult(200, new PspCharge("ch_1", "p", "succeeded", null, null)))
                .isEqualTo(new PspChargeResult(true, "ch_1", null));
        assertThat(PspGateway.toResult(200, new PspCharge("ch_2", "p", "declined", "insufficient_funds", null)))
                .isEqualTo(new PspChargeResult(false, "ch_2", "insufficient_funds"));
    }

    @Test
    void aRefusedRequestIsFailedWithThePspCode() {
        assertThat(PspGateway.toResult(400, error("unknown_source")))
                .isEqualTo(new PspChargeResult(false, null, "unknown_source"));
        assertThat(PspGateway.toResult(403, null)).isEqualTo(new PspChargeResult(false, null, "psp_rejected_403"));
    }

    @Test
    void anIdempotencyConflictAtThePspIsUnknownNeverFailed() {
        // a charge under the payment id may exist (in flight, or made from another body): the resolver asks for it
        assertThatThrownBy(() -> PspGateway.toResult(409, error("idempotency_request_in_progress")))
                .isInstanceOf(PspUnavailableException.class);
        assertThatThrownBy(() -> PspGateway.toResult(409, null)).isInstanceOf(PspUnavailableException.class);
        assertThatThrownBy(() -> PspGateway.toResult(422, error("idempotency_key_reused")))
                .isInstanceOf(PspUnavailableException.class);
    }

    @Test
    void serverErrorsTimeoutsAndThrottlingAreUnknown() {
        for (int status : new int[] {500, 502, 503, 408, 429}) {
            assertThatThrownBy(() -> PspGateway.toResult(status, null)).isInstanceOf(PspUnavailableException.class);
        }
        assertThatThrownBy(() -> PspGateway.toResult(200, new PspCharge(null, "p", "succeeded", null, null)))
                .isInstanceOf(PspUnavailableException.class);
    }

    private static PspCharge error(String code) {
        return new PspCharge(null, null, null, null, new PspError(code, "message"));
    }
}
