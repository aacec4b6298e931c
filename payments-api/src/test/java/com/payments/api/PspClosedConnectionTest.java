package com.payments.api;

import static com.payments.api.TestSupport.body;
import static com.payments.api.TestSupport.unique;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * A PSP that closes the connection before answering (as a server does with a kept-alive connection it no longer
 * wants): the capture sends the charge once more at once, under the same idempotency key, and the payment is
 * CAPTURED. More such closes than the circuit breaker's window (20 calls) never open it: they are no PSP failure.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = PspClosedConnectionTest.ClosingPsp.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class PspClosedConnectionTest {
    static final int CAPTURES = 30;

    @Test
    void aChargeWhoseConnectionClosedIsSentAgainWithTheSameKey() {
        // Read here, not injected: Quarkus checks a test class's injection points at every start, also for the other
        // classes' starts, where this resource (and the property) does not exist.
        String pspUrl = ConfigProvider.getConfig().getValue("closing-psp.url", String.class);
        for (int i = 0; i < CAPTURES; i++) {
            Response response = TestSupport.capture(
                    TestSupport.KEY_A, unique("key"), body(unique("order"), 700, "EUR", "tok_visa"));
            response.then().statusCode(201);
            String id = response.path("id");
            assertThat(response.<String>path("status")).isEqualTo("CAPTURED");
            // Two attempts, both with the payment id as the PSP's idempotency key; the first got no answer.
            assertThat(given().baseUri(pspUrl)
                            .get("/test/keys/" + id)
                            .then()
                            .statusCode(200)
                            .extract()
                            .<List<String>>path(""))
                    .containsExactly(id, id);
        }
    }

    /**
     * The PSP: closes the connection on the first charge of each reference, charges on the second; tells the test the
     * idempotency keys it received for a reference.
     */
    public static class ClosingPsp implements QuarkusTestResourceLifecycleManager {
        static final Map<String, List<String>> KEYS_BY_REFERENCE = new ConcurrentHashMap<>();
        private Vertx vertx;

        @Override
        public Map<String, String> start() {
            vertx = Vertx.vertx();
            HttpServer server = vertx.createHttpServer()
                    .requestHandler(request -> request.body(body -> {
                        if (request.path().startsWith("/test/keys/")) {
                            List<String> keys = KEYS_BY_REFERENCE.getOrDefault(
                                    request.path().substring("/test/keys/".length()), List.of());
                            request.response()
                                    .putHeader("Content-Type", "application/json")
                                    .end(new JsonArray(keys).encode());
                            return;
                        }
                        if (!request.path().equals("/v1/charges")) {
                            request.response().setStatusCode(404).end();
                            return;
                        }
                        String reference = body.result().toJsonObject().getString("reference");
                        List<String> keys =
                                KEYS_BY_REFERENCE.computeIfAbsent(reference, r -> new CopyOnWriteArrayList<>());
                        keys.add(request.getHeader("Idempotency-Key"));
                        if (keys.size() == 1) {
                            request.connection().close();
                            return;
                        }
                        request.response()
                                .putHeader("Content-Type", "application/json")
                                .end(new JsonObject()
                                        .put("id", "ch_" + reference.substring(0, 8))
                                        .put("reference", reference)
                                        .put("status", "succeeded")
                                        .encode());
                    }));
            int port;
            try {
                port = server.listen(0, "127.0.0.1")
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(10, TimeUnit.SECONDS)
                        .actualPort();
            } catch (Exception e) {
                throw new IllegalStateException("Cannot start the closing PSP", e);
            }
            // The sandbox adapter's own URL: a global test resource of other classes (the sandbox) sets psp.url.
            String url = "http://127.0.0.1:" + port;
            return Map.of("psp.sandbox.url", url, "closing-psp.url", url);
        }

        @Override
        public void stop() {
            vertx.close();
        }
    }
}
