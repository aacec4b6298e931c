package com.payments.psp;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.http.HttpServer;
import io.vertx.mutiny.ext.web.client.WebClient;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The adapters' client closes a kept-alive connection once it was idle for its idle time, before the server does: a
 * server that closes idle connections (the JDK's HttpServer after 30 s) must not close one under the next call.
 */
class PspHttpIdleCloseTest {

    @Test
    void anIdleConnectionIsClosedByTheClient() throws InterruptedException {
        Vertx vertx = Vertx.vertx();
        AtomicInteger open = new AtomicInteger();
        try {
            // a server that never closes idle connections itself
            HttpServer server = vertx.createHttpServer()
                    .connectionHandler(connection -> {
                        open.incrementAndGet();
                        connection.closeHandler(() -> open.decrementAndGet());
                    })
                    .requestHandler(request -> request.response().endAndForget("{}"))
                    .listen(0)
                    .await()
                    .atMost(Duration.ofSeconds(5));
            WebClient client = PspHttp.client(vertx, 4, null, Duration.ofSeconds(1));

            int status = client.get(server.actualPort(), "127.0.0.1", "/")
                    .send()
                    .await()
                    .atMost(Duration.ofSeconds(5))
                    .statusCode();

            assertThat(status).isEqualTo(200);
            assertThat(open).hasValue(1);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (open.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(open).as("connections open 5 s after the call").hasValue(0);
        } finally {
            vertx.closeAndAwait();
        }
        assertThat(PspHttp.IDLE_CLOSE).isLessThan(Duration.ofSeconds(30));
    }
}
