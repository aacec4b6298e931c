package com.payments.api.rest;

import io.opentelemetry.api.trace.Span;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import org.jboss.logging.MDC;

/**
 * Gives every request an id, {@code req_} and 32 hex digits, as Stripe does: in the {@code Request-Id} header of
 * every answer, in the {@code instance} of every problem+json answer ({@link ProblemMapper}), in the log lines of the
 * request (MDC {@code requestId}, beside OpenTelemetry's {@code traceId} and {@code spanId}) and on the request's
 * server span (attribute {@value #SPAN_ATTRIBUTE}). A merchant quotes it; an operator finds the request's trace by
 * it (docs/operations.md, "Tracing"). It runs before every other route of ours, so a refused body has one too.
 */
@ApplicationScoped
public class RequestIdRoute {
    public static final String HEADER = "Request-Id";
    public static final String MDC_KEY = "requestId";
    public static final String SPAN_ATTRIBUTE = "payments.request_id";
    private static final HexFormat HEX = HexFormat.of();

    void register(@Observes Router router) {
        router.route().order(RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT - 3).handler(rc -> {
            String id = newId();
            rc.response().putHeader(HEADER, id);
            MDC.put(MDC_KEY, id);
            Span.current().setAttribute(SPAN_ATTRIBUTE, id);
            rc.next();
        });
    }

    static String newId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return "req_" + HEX.toHexDigits(random.nextLong()) + HEX.toHexDigits(random.nextLong());
    }
}
