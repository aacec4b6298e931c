package com.payments.contracts.events;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The payment events of manual capture (issue 42) as JSON, the way the services write them to the outbox: the new
 * types, and PaymentCaptured's captured amount added without changing a field an existing consumer reads.
 */
class PaymentEventsJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    private static final UUID PAYMENT = UUID.fromString("7d1f3c2e-1111-4a5b-9c6d-0e1f2a3b4c5d");
    private static final UUID MERCHANT = UUID.fromString("5a6b7c8d-2222-4e5f-8a9b-0c1d2e3f4a5b");

    @Test
    void anAutomaticCaptureCarriesItsWholeAmountAsCaptured() throws Exception {
        JsonNode json = JSON.valueToTree(
                PaymentCaptured.of(PAYMENT, MERCHANT, "order-1", 2500, "EUR", "ch_1", Map.of("k", "v")));
        assertThat(json.path("type").asText()).isEqualTo("PaymentCaptured");
        assertThat(json.path("amount").asLong()).isEqualTo(2500);
        assertThat(json.path("capturedAmount").asLong()).isEqualTo(2500);
        // every field a consumer of the previous release reads is still there, with the same meaning
        assertThat(json.fieldNames())
                .toIterable()
                .contains(
                        "eventId",
                        "type",
                        "paymentId",
                        "merchantId",
                        "orderId",
                        "amount",
                        "currency",
                        "pspReference",
                        "occurredAt",
                        "metadata");
    }

    @Test
    void aPartialCaptureKeepsTheAuthorizedAmountAndSaysWhatWasCaptured() throws Exception {
        PaymentCaptured captured = PaymentCaptured.of(PAYMENT, MERCHANT, "order-1", 1000, 600, "EUR", "pi_1", Map.of());
        String written = JSON.writeValueAsString(captured);
        assertThat(JSON.readTree(written).path("amount").asLong()).isEqualTo(1000);
        assertThat(JSON.readTree(written).path("capturedAmount").asLong()).isEqualTo(600);
        assertThat(JSON.readValue(written, PaymentCaptured.class)).isEqualTo(captured);
    }

    /** An event written before the field existed reads with a null captured amount (= the amount). */
    @Test
    void aCaptureWrittenBeforeReadsWithoutCapturedAmount() throws Exception {
        PaymentCaptured old = JSON.readValue(
                """
                {"eventId":"0b9c8d7e-3333-4f6a-8b7c-1d2e3f4a5b6c","type":"PaymentCaptured",
                 "paymentId":"7d1f3c2e-1111-4a5b-9c6d-0e1f2a3b4c5d","merchantId":"5a6b7c8d-2222-4e5f-8a9b-0c1d2e3f4a5b",
                 "orderId":"order-1","amount":2500,"currency":"EUR","pspReference":"ch_1",
                 "occurredAt":"2026-12-03T12:00:00Z","metadata":{}}""",
                PaymentCaptured.class);
        assertThat(old.amount()).isEqualTo(2500);
        assertThat(old.capturedAmount()).isNull();
    }

    @Test
    void authorizationCancelAndExpiryAreEventsOfTheirOwnType() throws Exception {
        PaymentEvent[] events = {
            PaymentAuthorized.of(PAYMENT, MERCHANT, "order-1", 1000, "EUR", "pi_1", Map.of()),
            PaymentCanceled.of(PAYMENT, MERCHANT, "order-1", 1000, "EUR", "pi_1", Map.of()),
            PaymentExpired.of(PAYMENT, MERCHANT, "order-1", 1000, "EUR", "pi_1", Map.of())
        };
        for (PaymentEvent event : events) {
            String written = JSON.writeValueAsString(event);
            JsonNode json = JSON.readTree(written);
            assertThat(json.path("type").asText()).isEqualTo(event.getClass().getSimpleName());
            assertThat(json.path("paymentId").asText()).isEqualTo(PAYMENT.toString());
            assertThat(json.path("merchantId").asText()).isEqualTo(MERCHANT.toString());
            assertThat(json.path("amount").asLong()).isEqualTo(1000);
            assertThat(JSON.readValue(written, event.getClass())).isEqualTo(event);
        }
    }
}
