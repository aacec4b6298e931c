package com.payments.api.rest;

import com.payments.api.common.ApiMetrics;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * A body over the HTTP cap ({@code quarkus.http.limits.max-body-size}) gets a 413 as {@code application/problem+json}
 * ({@code body_too_large}) instead of Quarkus' bare 413, and the connection is closed as Quarkus does, since the
 * client may still be sending. This route runs just before Quarkus' own limit. A body announced by its
 * {@code Content-Length} is refused before it is read; a chunked body (no length) is read here, by Vert.x's body
 * handler, and refused as soon as it passes the cap.
 */
@ApplicationScoped
public class BodyLimitRoute {
    private static final String PROBLEM =
            "{\"type\":\"https://docs.payments.example/problems/body_too_large\",\"title\":\"Payload too large\","
                    + "\"status\":413,\"detail\":\"The request body is too large\",\"code\":\"body_too_large\"";

    private final ApiMetrics metrics;
    private final Optional<MemorySize> maxBodySize;

    public BodyLimitRoute(
            ApiMetrics metrics,
            @ConfigProperty(name = "quarkus.http.limits.max-body-size") Optional<MemorySize> maxBodySize) {
        this.metrics = metrics;
        this.maxBodySize = maxBodySize;
    }

    void register(@Observes Router router) {
        if (maxBodySize.isEmpty()) {
            return;
        }
        long limit = maxBodySize.get().asLongValue();
        BodyHandler chunkedBodies = BodyHandler.create(false).setBodyLimit(limit);
        router.route()
                .order(RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 1)
                .handler(rc -> {
                    String length = rc.request().getHeader(HttpHeaders.CONTENT_LENGTH);
                    if (length == null && rc.request().headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
                        chunkedBodies.handle(rc); // next() once the body is read, fail(413) when it passes the cap
                    } else if (length(length) > limit) {
                        refuse(rc);
                    } else {
                        rc.next();
                    }
                })
                .failureHandler(rc -> {
                    if (rc.statusCode() == 413) {
                        refuse(rc);
                    } else {
                        rc.next();
                    }
                });
    }

    private void refuse(RoutingContext rc) {
        metrics.rejected(413, "body_too_large");
        rc.response().endHandler(done -> rc.request().connection().close());
        rc.response()
                .setStatusCode(413)
                .putHeader(HttpHeaders.CONTENT_TYPE, ProblemMapper.PROBLEM_JSON)
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(Buffer.buffer(problem(rc.response().headers().get(RequestIdRoute.HEADER)), "UTF-8"));
    }

    /** The problem+json body; its {@code instance} is the request id (a header set by {@link RequestIdRoute}). */
    private static String problem(String requestId) {
        return requestId == null ? PROBLEM + "}" : PROBLEM + ",\"instance\":\"" + requestId + "\"}";
    }

    /** The announced length; none or unparsable: 0 (Quarkus' own handling applies). */
    private static long length(String header) {
        if (header == null) {
            return 0;
        }
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
