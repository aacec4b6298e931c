package com.payments.sandbox.stripe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.sandbox.Reply;

/**
 * Stripe's error object, {@code {"error":{"type","code","decline_code","message","param","payment_intent",...}}},
 * with Stripe's HTTP statuses: 400 invalid_request_error and idempotency_error, 401 without a valid key, 402
 * card_error, 404 for an unknown URL, 409 idempotency_key_in_use, 429 rate_limit, 500 api_error. Messages are fixed
 * texts or sanitized parameter names, never other input.
 */
final class StripeErrors {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private StripeErrors() {}

    static Reply invalid(String code, String message, String param) {
        return reply(400, error("invalid_request_error", code, message, param));
    }

    static Reply missing(String resource, String id) {
        ObjectNode error = error(
                "invalid_request_error", "resource_missing", "No such " + resource + ".", id == null ? null : "id");
        return reply(404, error);
    }

    static Reply unauthorized(String message) {
        return reply(401, error("invalid_request_error", null, message, null));
    }

    static Reply unknownUrl() {
        return reply(404, error("invalid_request_error", null, "Unrecognized request URL.", null));
    }

    static Reply rateLimited() {
        return reply(
                429,
                error(
                        "invalid_request_error",
                        "rate_limit",
                        "Too many requests hit the API too quickly. Please retry with exponential backoff.",
                        null));
    }

    static Reply apiError() {
        return reply(500, error("api_error", null, "An unknown error occurred (psp.faults.error-rate).", null));
    }

    /** Not a Stripe answer: the request never reached the PSP (the not-received knob), like the sandbox protocol's. */
    static Reply timeout() {
        return reply(504, error("api_error", "timeout", "The request timed out.", null));
    }

    static Reply keyInUse() {
        return reply(
                409,
                error(
                        "invalid_request_error",
                        "idempotency_key_in_use",
                        "There is currently another in-progress request using this Idempotency Key. Retry later.",
                        null));
    }

    static Reply keyReused(String key) {
        return reply(
                400,
                error(
                        "idempotency_error",
                        null,
                        "Keys for idempotent requests can only be used with the same parameters they were first used"
                                + " with. Try using a key other than the one used in the original request.",
                        null));
    }

    /** 400 {@code payment_intent_unexpected_state}, with the PaymentIntent as it is, as Stripe answers. */
    static Reply unexpectedState(String message, ObjectNode paymentIntent) {
        ObjectNode error = error("invalid_request_error", "payment_intent_unexpected_state", message, null);
        error.set("payment_intent", paymentIntent);
        return reply(400, error);
    }

    static Reply cardDeclined(String declineCode, String chargeId, ObjectNode paymentIntent) {
        ObjectNode error = error("card_error", "card_declined", declineMessage(declineCode), null);
        error.put("decline_code", declineCode);
        error.put("charge", chargeId);
        error.set("payment_intent", paymentIntent);
        return reply(402, error);
    }

    static String declineMessage(String declineCode) {
        return "insufficient_funds".equals(declineCode)
                ? "Your card has insufficient funds."
                : "Your card was declined.";
    }

    private static ObjectNode error(String type, String code, String message, String param) {
        ObjectNode error = MAPPER.createObjectNode();
        if (code != null) {
            error.put("code", code);
            error.put("doc_url", "https://stripe.com/docs/error-codes/" + code.replace('_', '-'));
        }
        error.put("message", message);
        if (param != null) {
            error.put("param", param);
        }
        error.put("type", type);
        return error;
    }

    private static Reply reply(int status, ObjectNode error) {
        ObjectNode body = MAPPER.createObjectNode();
        body.set("error", error);
        try {
            return new Reply(status, MAPPER.writeValueAsBytes(body), false, 0);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
