package com.payments.api.rest;

import com.payments.api.common.ApiMetrics;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * From SIGTERM on (docs/deployment.md, "Graceful shutdown"): a request that arrives gets a 503
 * {@code service_stopping} with {@code Retry-After: 1} at once, before anything is claimed or sent to the PSP; the
 * requests already in flight finish; and every answer, theirs too, carries {@code Connection: close} and its
 * connection is closed after it.
 *
 * <p>Why: Quarkus's drain ({@code quarkus.shutdown.timeout}) counts requests in flight and ends at zero, but the
 * listener stays open until the HTTP server closes after the drain (Vert.x 4 has no "stop accepting" step), and that
 * close drops every connection with whatever was sent on it. Quarkus serves and counts a request that arrives during
 * the drain, so under steady load the count never reached zero and the drain's timeout cut every capture then in
 * flight; and an answer to a request from before the signal kept its connection alive, so its client's next request,
 * sent as the drain ended, was cut. The 503 lets the count fall to zero; {@code Connection: close} sends the client's
 * next request to a new connection (another pod behind a Service); and {@code quarkus.shutdown.delay} keeps the
 * listener answering 503 while the captures in flight finish, so their clients hear "stopping" before it closes.
 */
@ApplicationScoped
public class StoppingRoute {
    private static final String PROBLEM =
            "{\"type\":\"https://docs.payments.example/problems/service_stopping\",\"title\":\"Service stopping\","
                    + "\"status\":503,\"detail\":\"This instance is shutting down; nothing was stored. Retry the same"
                    + " request\",\"code\":\"service_stopping\"";

    private final ApiMetrics metrics;
    private volatile boolean stopping;
    private Thread hook;

    public StoppingRoute(ApiMetrics metrics) {
        this.metrics = metrics;
    }

    void onStart(@Observes StartupEvent event) {
        // Quarkus's own shutdown hook starts the drain; ShutdownEvent comes only after the HTTP server closed, so this
        // hook runs beside Quarkus's, from the same signal
        hook = new Thread(() -> stopping = true, "payments-api-stopping");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    void onStop(@Observes ShutdownEvent event) {
        stopping = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is exiting: the hook has run
        }
    }

    void register(@Observes Router router) {
        router.route().order(RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 2).handler(rc -> {
            if (stopping) {
                refuse(rc);
                return;
            }
            if (rc.request().version() != HttpVersion.HTTP_2) {
                // an answer written after the signal closes its connection too (Quarkus does so only for requests
                // that arrive after it)
                rc.addHeadersEndHandler(v -> {
                    if (stopping) {
                        rc.response().headers().set(HttpHeaders.CONNECTION, "close");
                    }
                });
                rc.addEndHandler(end -> {
                    if ("close".equals(rc.response().headers().get(HttpHeaders.CONNECTION))) {
                        rc.request().connection().close();
                    }
                });
            }
            rc.next();
        });
    }

    private void refuse(RoutingContext rc) {
        metrics.rejected(503, "service_stopping");
        String requestId = rc.response().headers().get(RequestIdRoute.HEADER);
        if (rc.request().version() != HttpVersion.HTTP_2) {
            rc.response().putHeader(HttpHeaders.CONNECTION, "close");
            rc.response().endHandler(done -> rc.request().connection().close());
        }
        rc.response()
                .setStatusCode(503)
                .putHeader(HttpHeaders.CONTENT_TYPE, ProblemMapper.PROBLEM_JSON)
                .putHeader(HttpHeaders.RETRY_AFTER, "1")
                .end(Buffer.buffer(
                        requestId == null ? PROBLEM + "}" : PROBLEM + ",\"instance\":\"" + requestId + "\"}", "UTF-8"));
    }
}
