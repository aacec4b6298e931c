package com.payments.psp.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.ChargeResult.Status;
import com.payments.psp.port.RefundResult;
import com.payments.psp.sandbox.SandboxPsp.Answer;
import com.payments.psp.settlement.SandboxSettlementFile;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a sandbox-protocol answer is read (was payments-api's PspGatewayTest): a refusal is DECLINED only when the PSP
 * surely holds no charge for the key; everything that proves nothing is UNKNOWN.
 */
class SandboxOutcomeTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void succeededAndDeclinedChargesAreDefinite() {
        assertThat(charge(200, "{\"id\":\"ch_1\",\"reference\":\"p\",\"status\":\"succeeded\"}"))
                .isEqualTo(ChargeResult.captured("ch_1"));
        assertThat(
                        charge(
                                200,
                                "{\"id\":\"ch_2\",\"reference\":\"p\",\"status\":\"declined\",\"declineCode\":\"insufficient_funds\"}"))
                .isEqualTo(ChargeResult.declined("ch_2", "insufficient_funds"));
        assertThat(charge(200, "{\"id\":\"ch_3\",\"status\":\"succeeded\",\"amount\":3100,\"currency\":\"EUR\"}"))
                .isEqualTo(ChargeResult.captured("ch_3").withMoney(3100L, "EUR"));
    }

    @Test
    void aRefusedRequestIsDeclinedWithThePspCode() {
        assertThat(charge(400, error("unknown_source"))).isEqualTo(ChargeResult.declined(null, "unknown_source"));
        assertThat(charge(403, "")).isEqualTo(ChargeResult.declined(null, "psp_rejected_403"));
    }

    @Test
    void anIdempotencyConflictAtThePspIsUnknownNeverDeclined() {
        // a charge under the payment id may exist (in flight, or made from another body): the resolver asks for it
        assertThat(charge(409, error("idempotency_request_in_progress")).status())
                .isEqualTo(Status.UNKNOWN);
        assertThat(charge(409, "").status()).isEqualTo(Status.UNKNOWN);
        assertThat(charge(422, error("idempotency_key_reused")).status()).isEqualTo(Status.UNKNOWN);
    }

    @Test
    void serverErrorsTimeoutsAndThrottlingAreUnknown() {
        for (int status : new int[] {500, 502, 503, 408, 429}) {
            assertThat(charge(status, "").status()).isEqualTo(Status.UNKNOWN);
        }
        assertThat(charge(200, "{\"reference\":\"p\",\"status\":\"succeeded\"}").status())
                .isEqualTo(Status.UNKNOWN);
        assertThat(charge(200, "not json").status()).isEqualTo(Status.UNKNOWN);
    }

    @Test
    void refundAnswers() {
        assertThat(refund(200, "{\"id\":\"re_1\",\"status\":\"succeeded\"}", false))
                .isEqualTo(RefundResult.of(RefundResult.Status.SUCCEEDED, "re_1", null));
        assertThat(refund(200, "{\"id\":\"re_2\",\"status\":\"failed\"}", false))
                .isEqualTo(RefundResult.of(RefundResult.Status.FAILED, "re_2", "psp_refund_failed"));
        assertThat(refund(422, error("amount_exceeds_refundable"), false))
                .isEqualTo(RefundResult.of(RefundResult.Status.FAILED, null, "amount_exceeds_refundable"));
        assertThat(refund(404, error("not_found"), true).status()).isEqualTo(RefundResult.Status.NOT_FOUND);
        // a rejected request: an operator must look, and it is never FAILED
        assertThat(refund(404, error("unknown_charge"), false))
                .isEqualTo(RefundResult.attention(null, "HTTP 404 unknown_charge"));
        for (int status : new int[] {500, 503, 408, 429}) {
            assertThat(refund(status, "", false)).isEqualTo(RefundResult.unknown(null, "http_" + status));
        }
        assertThat(refund(200, "<html>", true).status()).isEqualTo(RefundResult.Status.UNKNOWN);
    }

    @Test
    void settlementFileLines() {
        assertThat(List.of(
                        SandboxSettlementFile.parseLine("ch_1,CHARGE,p1,1000,29,EUR,2026-01-02T10:00:00Z", 2),
                        SandboxSettlementFile.parseLine("fee_1,FEE,,0,15,EUR,2026-01-02T11:00:00Z\r", 3)))
                .extracting(
                        l -> l.pspReference() + " " + l.type() + " " + l.reference() + " " + l.amount() + " " + l.fee())
                .containsExactly("ch_1 CHARGE p1 1000 29", "fee_1 FEE null 0 15");
    }

    @Test
    void authorizationsReadTheirStateAndACaptureItsCapturedAmount() {
        String held = "{\"id\":\"ch_4\",\"status\":\"authorized\",\"amount\":1000,\"currency\":\"EUR\","
                + "\"captureMethod\":\"manual\",\"capturedAmount\":0}";
        assertThat(charge(200, held)).isEqualTo(ChargeResult.authorized("ch_4").withMoney(1000L, "EUR"));
        String captured = "{\"id\":\"ch_4\",\"status\":\"succeeded\",\"amount\":1000,\"currency\":\"EUR\","
                + "\"captureMethod\":\"manual\",\"capturedAmount\":600}";
        assertThat(settle(200, captured))
                .isEqualTo(ChargeResult.captured("ch_4").withMoney(600L, "EUR"));
        assertThat(charge(200, "{\"id\":\"ch_4\",\"status\":\"canceled\",\"cancellationReason\":\"expired\"}"))
                .isEqualTo(ChargeResult.canceled("ch_4", ChargeResult.EXPIRED));
        assertThat(charge(200, "{\"id\":\"ch_4\",\"status\":\"canceled\",\"cancellationReason\":\"voided\"}"))
                .isEqualTo(ChargeResult.canceled("ch_4", ChargeResult.VOIDED));
    }

    @Test
    void aRefusedCaptureOrVoidIsAStableDeclineAndWhatProvesNothingIsUnknown() {
        assertThat(settle(422, error("authorization_expired")))
                .isEqualTo(ChargeResult.declined(null, ChargeResult.AUTHORIZATION_EXPIRED));
        assertThat(settle(422, error("authorization_canceled")))
                .isEqualTo(ChargeResult.declined(null, ChargeResult.AUTHORIZATION_CANCELED));
        assertThat(settle(422, error("amount_exceeds_authorized")))
                .isEqualTo(ChargeResult.declined(null, ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED));
        assertThat(settle(422, error("charge_already_captured")))
                .isEqualTo(ChargeResult.declined(null, ChargeResult.ALREADY_CAPTURED));
        assertThat(settle(422, error("charge_not_authorized")))
                .isEqualTo(ChargeResult.declined(null, ChargeResult.NOT_AUTHORIZED));
        // the key holds another capture (another amount), or the charge id is wrong: an operator must look
        assertThat(settle(422, error("idempotency_key_reused")).needsAttention())
                .isTrue();
        assertThat(settle(422, error("idempotency_key_reused")).status()).isEqualTo(Status.UNKNOWN);
        assertThat(settle(404, error("charge_not_found")).status()).isEqualTo(Status.UNKNOWN);
        for (int status : new int[] {500, 503, 504, 408, 409, 429}) {
            assertThat(settle(status, error("x")).status()).as("HTTP " + status).isEqualTo(Status.UNKNOWN);
        }
        assertThat(settle(400, error("invalid_amount"))).isEqualTo(ChargeResult.declined(null, "invalid_amount"));
    }

    private static ChargeResult settle(int status, String body) {
        return SandboxPsp.settleOutcome(new Answer(status, json(body)));
    }

    private static ChargeResult charge(int status, String body) {
        return SandboxPsp.chargeOutcome(new Answer(status, json(body)));
    }

    private static RefundResult refund(int status, String body, boolean lookup) {
        return SandboxPsp.refundOutcome(new Answer(status, json(body)), lookup);
    }

    private static JsonNode json(String body) {
        if (body.isEmpty()) {
            return MAPPER.missingNode();
        }
        try {
            return MAPPER.readTree(body);
        } catch (Exception e) {
            return null;
        }
    }

    private static String error(String code) {
        return "{\"error\":{\"code\":\"" + code + "\",\"message\":\"message\"}}";
    }
}
