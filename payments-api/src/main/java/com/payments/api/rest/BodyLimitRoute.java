package com.payments.api.rest;

import com.payments.api.service.ApiMetrics;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * A body over the HTTP cap ({@code quarkus.http.limits.max-body-size}) announced by its {@code Content-Length}: Quarkus'
 * own limit answers a bare 413 without a body; this route, ordered just before it, answers the same 413 as
 * {@code application/problem+json} ({@code body_too_large}) and closes the connection as Quarkus does, since the
 * client may still be sending. A chunked body without a length still gets Quarkus' bare 413 once it passes the cap.
 */
@ApplicationScoped
public class BodyLimitRoute {
    private static final Buffer PROBLEM = Buffer.buffer(
            "{\"type\":\"https://docs.payments.example/problems/body_too_large\",\"title\":\"Payload too large\","
                    + "\"status\":413,\"detail\":\"The request body is too large\",\"code\":\"body_too_large\"}",
            StandardCharsets.UTF_8.name());

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
        router.route().order(RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 1).handler(rc -> {
            if (length(rc.request().getHeader(HttpHeaders.CONTENT_LENGTH)) <= limit) {
                rc.next();
                return;
            }
            metrics.rejected(413, "body_too_large");
            rc.response().endHandler(done -> rc.request().connection().close());
            rc.response()
                    .setStatusCode(413)
                    .putHeader(HttpHeaders.CONTENT_TYPE, ProblemMapper.PROBLEM_JSON)
                    .putHeader(HttpHeaders.CONNECTION, "close")
                    .end(PROBLEM.copy());
        });
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
