package com.payments.clients;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.client.ApiClient;
import com.payments.client.ApiException;
import com.payments.client.ApiResponse;
import com.payments.client.api.PaymentsApi;
import com.payments.client.api.RefundsApi;
import com.payments.client.model.CaptureRequest;
import com.payments.client.model.ManualCaptureRequest;
import com.payments.client.model.PaymentStatus;
import com.payments.client.model.PaymentView;
import com.payments.client.model.Problem;
import com.payments.client.model.RefundAccepted;
import com.payments.client.model.RefundRequest;
import com.payments.client.model.RefundView;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * The README's walkthrough through the generated Java client (docs/clients.md): capture, replay with the same key,
 * the same key with another amount (422), refund, and reading the refund until SUCCEEDED; then manual capture
 * (authorize, capture part, replay, refunds within and above the captured amount, cancel). Exit code 0 when every step
 * behaved as documented. Arguments: API base URL, merchant API key.
 */
public final class Walkthrough {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        ApiClient client = new ApiClient();
        client.updateBaseUri(args.length > 0 ? args[0] : "http://127.0.0.1:8080");
        String apiKey = args.length > 1 ? args[1] : "sk_test_demo_merchant_a";
        client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + apiKey));
        PaymentsApi payments = new PaymentsApi(client);
        RefundsApi refunds = new RefundsApi(client);
        // Base 36: a 13-digit run could pass for a card number, which the API refuses (docs/api.md).
        String run = "java-" + Long.toString(System.currentTimeMillis(), 36);

        step("1. create a payment of 25.00 EUR");
        CaptureRequest capture = new CaptureRequest()
                .orderId("order-" + run)
                .amount(2500L)
                .currency("EUR")
                .source("tok_visa");
        String paymentKey = "pay-" + run;
        ApiResponse<PaymentView> first =
                withRetries(() -> payments.createPaymentWithHttpInfo(paymentKey, capture, null, null));
        UUID paymentId = first.getData().getId();
        System.out.println(first.getStatusCode() + " " + first.getData());
        if (first.getStatusCode() == 202) {
            System.out.println("outcome unknown for now; waiting for the resolver");
            poll(() -> payments.getPayment(paymentId).getStatus() == PaymentStatus.CAPTURED, "payment CAPTURED");
        } else {
            check(first.getStatusCode() == 201, "expected 201, got " + first.getStatusCode());
            check(first.getData().getStatus() == PaymentStatus.CAPTURED, "payment not CAPTURED");
        }

        step("2. replay it with the same key: same payment, Idempotent-Replayed: true");
        ApiResponse<PaymentView> replay =
                withRetries(() -> payments.createPaymentWithHttpInfo(paymentKey, capture, null, null));
        System.out.println(replay.getStatusCode() + " " + replay.getHeaders().get("Idempotent-Replayed"));
        check(replay.getStatusCode() == 201, "replay answered " + replay.getStatusCode());
        check(paymentId.equals(replay.getData().getId()), "replay is another payment");
        check(List.of("true").equals(replay.getHeaders().get("Idempotent-Replayed")), "no Idempotent-Replayed: true");

        step("3. the same key with another amount: 422 idempotency_key_reused");
        expectProblem(
                () -> payments.createPayment(paymentKey, capture.amount(9999L), null, null),
                422,
                "idempotency_key_reused");

        step("4. refund 10.00 EUR of it");
        RefundRequest refund = new RefundRequest().amount(1000L).reason("walkthrough");
        ApiResponse<RefundAccepted> accepted =
                withRetries(() -> refunds.createRefundWithHttpInfo(paymentId, "refund-" + run, refund, null, null));
        System.out.println(accepted.getStatusCode() + " " + accepted.getData());
        check(accepted.getStatusCode() == 202, "expected 202, got " + accepted.getStatusCode());
        UUID refundId = accepted.getData().getRefundId();

        step("5. read the refund until SUCCEEDED");
        poll(() -> "SUCCEEDED".equals(payments.getRefund(refundId).getStatus()), "refund SUCCEEDED");
        RefundView done = payments.getRefund(refundId);
        System.out.println(done);
        PaymentView payment = payments.getPayment(paymentId);
        check(payment.getRefundableAmount() == 1500L, "refundableAmount " + payment.getRefundableAmount());

        manualCapture(payments, refunds, run);

        System.out.println("\njava client walkthrough: all steps passed");
    }

    /**
     * The README's steps 8-14: authorize, capture part of it, replay the capture, refund within the captured amount and
     * above it, cancel another authorization and refund it.
     */
    static void manualCapture(PaymentsApi payments, RefundsApi refunds, String run) throws Exception {
        step("8. authorize 40.00 EUR with captureMethod manual");
        UUID authorized = authorize(payments, "order-" + run + "-m", "auth-" + run);
        check(payments.getPayment(authorized).getRefundableAmount() == 0L, "an authorization has nothing to refund");

        step("9. capture 30.00 EUR of it");
        String captureKey = "capture-" + run;
        ManualCaptureRequest part = new ManualCaptureRequest().amount(3000L);
        ApiResponse<PaymentView> captured =
                withRetries(() -> payments.captureAuthorizationWithHttpInfo(authorized, captureKey, null, null, part));
        System.out.println(captured.getStatusCode() + " " + captured.getData());
        if (captured.getStatusCode() == 202) {
            System.out.println("outcome unknown for now (CAPTURING); waiting for the resolver");
            poll(() -> payments.getPayment(authorized).getStatus() == PaymentStatus.CAPTURED, "payment CAPTURED");
        } else {
            check(captured.getStatusCode() == 200, "expected 200, got " + captured.getStatusCode());
        }
        PaymentView capturedPayment = payments.getPayment(authorized);
        check(capturedPayment.getStatus() == PaymentStatus.CAPTURED, "payment not CAPTURED");
        check(capturedPayment.getCapturedAmount() == 3000L, "capturedAmount " + capturedPayment.getCapturedAmount());
        check(
                capturedPayment.getRefundableAmount() == 3000L,
                "refundableAmount " + capturedPayment.getRefundableAmount());

        step("10. replay the capture with the same key: the same answer, Idempotent-Replayed: true");
        ApiResponse<PaymentView> replay =
                withRetries(() -> payments.captureAuthorizationWithHttpInfo(authorized, captureKey, null, null, part));
        System.out.println(replay.getStatusCode() + " " + replay.getHeaders().get("Idempotent-Replayed"));
        check(replay.getStatusCode() == 200, "replay answered " + replay.getStatusCode());
        check(
                captured.getStatusCode() == 202 || replay.getData().equals(captured.getData()),
                "replay differs from the first answer");
        check(List.of("true").equals(replay.getHeaders().get("Idempotent-Replayed")), "no Idempotent-Replayed: true");

        step("11. refund 10.00 EUR of the captured 30.00");
        ApiResponse<RefundAccepted> accepted = withRetries(() -> refunds.createRefundWithHttpInfo(
                authorized, "refund-" + run + "-m1", new RefundRequest().amount(1000L), null, null));
        System.out.println(accepted.getStatusCode() + " " + accepted.getData());
        check(accepted.getStatusCode() == 202, "expected 202, got " + accepted.getStatusCode());
        UUID refundId = accepted.getData().getRefundId();
        poll(() -> "SUCCEEDED".equals(payments.getRefund(refundId).getStatus()), "refund SUCCEEDED");
        long refundable = payments.getPayment(authorized).getRefundableAmount();
        check(refundable == 2000L, "refundableAmount " + refundable);

        step("12. refund 35.00 EUR, above the captured 30.00: 422 refund_exceeds_refundable");
        expectProblem(
                () -> refunds.createRefund(
                        authorized, "refund-" + run + "-m2", new RefundRequest().amount(3500L), null, null),
                422,
                "refund_exceeds_refundable");

        step("13. authorize another 40.00 EUR and cancel it");
        UUID voided = authorize(payments, "order-" + run + "-c", "auth-" + run + "-c");
        // An empty object, not null: the generated client would send a null body as the JSON text null (400).
        ApiResponse<PaymentView> canceled = withRetries(
                () -> payments.cancelAuthorizationWithHttpInfo(voided, "cancel-" + run, null, null, Map.of()));
        System.out.println(canceled.getStatusCode() + " " + canceled.getData());
        if (canceled.getStatusCode() == 202) {
            System.out.println("outcome unknown for now (CANCELING); waiting for the resolver");
            poll(() -> payments.getPayment(voided).getStatus() == PaymentStatus.CANCELED, "payment CANCELED");
        } else {
            check(canceled.getStatusCode() == 200, "expected 200, got " + canceled.getStatusCode());
            check(canceled.getData().getStatus() == PaymentStatus.CANCELED, "payment not CANCELED");
        }

        step("14. refund the canceled payment: 422 payment_not_refundable");
        expectProblem(
                () -> refunds.createRefund(
                        voided, "refund-" + run + "-c", new RefundRequest().amount(1000L), null, null),
                422,
                "payment_not_refundable");
    }

    /** A manual payment of 40.00 EUR, AUTHORIZED (waiting for the resolver when the PSP's answer was lost). */
    static UUID authorize(PaymentsApi payments, String orderId, String key) throws Exception {
        CaptureRequest request = new CaptureRequest()
                .orderId(orderId)
                .amount(4000L)
                .currency("EUR")
                .source("tok_visa")
                .captureMethod(CaptureRequest.CaptureMethodEnum.MANUAL);
        ApiResponse<PaymentView> answer =
                withRetries(() -> payments.createPaymentWithHttpInfo(key, request, null, null));
        System.out.println(answer.getStatusCode() + " " + answer.getData());
        UUID id = answer.getData().getId();
        if (answer.getStatusCode() == 202) {
            System.out.println("outcome unknown for now (AUTHORIZING); waiting for the resolver");
            poll(() -> payments.getPayment(id).getStatus() == PaymentStatus.AUTHORIZED, "payment AUTHORIZED");
        } else {
            check(answer.getStatusCode() == 201, "expected 201, got " + answer.getStatusCode());
            check(answer.getData().getStatus() == PaymentStatus.AUTHORIZED, "payment not AUTHORIZED");
        }
        check(
                answer.getData().getCaptureMethod() == PaymentView.CaptureMethodEnum.MANUAL,
                "captureMethod " + answer.getData().getCaptureMethod());
        return id;
    }

    static void expectProblem(Callable<?> call, int status, String code) throws Exception {
        try {
            call.call();
            throw new AssertionError("accepted, expected " + status + " " + code);
        } catch (ApiException e) {
            Problem problem = problem(e);
            System.out.println(e.getCode() + " " + problem);
            check(e.getCode() == status, "expected " + status + ", got " + e.getCode());
            check(code.equals(problem.getCode()), "code " + problem.getCode());
        }
    }

    /**
     * Sends a request again, with the same Idempotency-Key, when its answer was lost (connection error) or says to
     * retry (409 idempotency_key_in_use, 429, 503): a retry with the same key never charges twice.
     */
    static <T> ApiResponse<T> withRetries(Callable<ApiResponse<T>> call) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.call();
            } catch (ApiException e) {
                boolean retryable = e.getCode() == 0 || e.getCode() == 409 || e.getCode() == 429 || e.getCode() == 503;
                if (!retryable || attempt == 5) {
                    throw e;
                }
                String retryAfter = e.getResponseHeaders() == null
                        ? null
                        : e.getResponseHeaders().firstValue("Retry-After").orElse(null);
                Thread.sleep(retryAfter == null ? 1000L : Long.parseLong(retryAfter) * 1000L);
            }
        }
    }

    static Problem problem(ApiException e) throws Exception {
        return JSON.readValue(e.getResponseBody(), Problem.class);
    }

    static void poll(Callable<Boolean> condition, String what) throws Exception {
        for (int i = 0; i < 120; i++) {
            if (condition.call()) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("not reached within 60 s: " + what);
    }

    static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    static void step(String name) {
        System.out.println("\n--- " + name);
    }
}
