package com.payments.api;

import static com.payments.api.TestSupport.KEY_A;
import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.capture;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Stripe answers that the sandbox's Stripe mode does not give a fresh capture, from a stub Stripe on loopback: 400
 * {@code idempotency_error} (our payment id's key is held with other parameters) and 401 (a rejected API key). Both
 * leave the payment UNKNOWN, never FAILED, with the operations item {@code psp_charge_needs_attention}.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = StripeRefusedChargeTest.RefusingStripe.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class StripeRefusedChargeTest {

    @Inject
    Pool pool;

    @Test
    void aKeyStripeHoldsWithOtherParametersIsUnknownWithAnOperationsItemNeverFailed() {
        UUID id = captureUnknown("tok_visa");

        Row item = item(id);
        assertThat(item.getString("status")).isEqualTo("OPEN");
        JsonObject details = item.getJsonObject("details");
        assertThat(details.getString("detectedBy")).isEqualTo("capture");
        assertThat(details.getString("pspAnswer")).isEqualTo("idempotency_error");
        assertThat(details.getString("paymentId")).isEqualTo(id.toString());
    }

    @Test
    void aRejectedApiKeyIsUnknownWithAnOperationsItemNeverFailed() {
        UUID id = captureUnknown("tok_unauthorized");

        assertThat(item(id).getJsonObject("details").getString("pspAnswer")).isEqualTo("http_401");
    }

    /** A capture answered 202 UNKNOWN: no FAILED, no money, no event; due for the resolver. */
    private UUID captureUnknown(String source) {
        Response response = capture(KEY_A, unique("key"), body(unique("order"), 1800, "EUR", source));
        response.then().statusCode(202);
        assertThat(response.<String>path("status")).isEqualTo("UNKNOWN");
        UUID id = UUID.fromString(response.path("id"));
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payments WHERE id = $1 AND status = 'UNKNOWN' AND next_attempt_at IS NOT NULL"
                                + " AND last_error LIKE 'PspAttentionException %'",
                        id))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND to_status = 'FAILED'",
                        id))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isZero();
        return id;
    }

    private Row item(UUID id) {
        return pool.preparedQuery(
                        "SELECT status, details FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1"
                                + " AND reason = 'psp_charge_needs_attention'")
                .execute(Tuple.of(id.toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
    }

    /**
     * A Stripe stub: {@code POST /v1/payment_intents} answers 401 for the token {@code tok_unauthorized}, else 400
     * {@code idempotency_error}, as Stripe's error objects.
     */
    public static class RefusingStripe implements QuarkusTestResourceLifecycleManager {
        private Vertx vertx;

        @Override
        public Map<String, String> start() {
            vertx = Vertx.vertx();
            HttpServer server = vertx.createHttpServer()
                    .requestHandler(request -> request.body(body -> {
                        if (!request.path().equals("/v1/payment_intents")) {
                            request.response().setStatusCode(404).end();
                            return;
                        }
                        boolean unauthorized = body.result().toString().contains("tok_unauthorized");
                        JsonObject error = unauthorized
                                ? new JsonObject()
                                        .put("type", "invalid_request_error")
                                        .put("message", "Invalid API Key provided")
                                : new JsonObject()
                                        .put("type", "idempotency_error")
                                        .put(
                                                "message",
                                                "Keys for idempotent requests can only be used with the same"
                                                        + " parameters they were first used with.");
                        request.response()
                                .setStatusCode(unauthorized ? 401 : 400)
                                .putHeader("Content-Type", "application/json")
                                .end(new JsonObject().put("error", error).encode());
                    }));
            int port;
            try {
                port = server.listen(0, "127.0.0.1")
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(10, TimeUnit.SECONDS)
                        .actualPort();
            } catch (Exception e) {
                throw new IllegalStateException("Cannot start the Stripe stub", e);
            }
            return Map.of(
                    "psp.provider",
                    "stripe",
                    "psp.stripe.api-base",
                    "http://127.0.0.1:" + port,
                    "psp.stripe.api-key",
                    "sk_test_stub");
        }

        @Override
        public void stop() {
            vertx.close();
        }
    }
}
