package com.payments.api.rest;

import com.payments.api.config.ApiConfig;
import io.quarkus.vertx.http.ManagementInterface;
import io.smallrye.common.vertx.ContextLocals;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;

/**
 * Serves the operator API ({@code /v1/admin/*}) and the operator console ({@code /console/*}) on the management
 * interface. Quarkus' management router serves only extension endpoints (health, metrics, OpenAPI), so a request for
 * an operator path that arrives there is handed to the main router, where the JAX-RS resources and the console live.
 * With {@code payments.admin.management-only=true} the main router answers 404 to an operator path unless the request
 * came that way, so the merchant port serves only the merchant API and the PSP webhook.
 *
 * <p>On the management port the body of an operator request is read first (at most {@link #MAX_BODY_BYTES}), then
 * the same routing context continues through the main router's routes ({@code Router.handleContext}), where the
 * resources read the body already there. The request's own (duplicated) Vert.x context carries a mark of that
 * hand-over; a request that reached the merchant port has a context of its own without it.
 */
@ApplicationScoped
public class OperatorRoutes {
    static final String[] OPERATOR_PREFIXES = {"/v1/admin", "/console"};
    private static final String VIA_MANAGEMENT = "payments.via-management-interface";
    /** Largest operator request body (the same hard cap as the merchant port's quarkus.http.limits.max-body-size). */
    static final long MAX_BODY_BYTES = 64 * 1024;

    // A String, not a Vert.x Buffer: the native build initializes this class at build time and refuses a Buffer
    // (Netty memory) in the image heap.
    private static final String NOT_FOUND =
            "{\"type\":\"https://docs.payments.example/problems/not_found\",\"title\":\"Not found\",\"status\":404,"
                    + "\"detail\":\"No such resource\",\"code\":\"not_found\"}";

    private final boolean managementOnly;
    private volatile Router main;

    public OperatorRoutes(ApiConfig config) {
        this.managementOnly = config.admin().managementOnly();
    }

    void onMainRouter(@Observes Router router) {
        this.main = router;
        if (managementOnly) {
            router.route().order(Integer.MIN_VALUE).handler(this::refuseUnlessViaManagement);
        }
    }

    void onManagementRouter(@Observes ManagementInterface management) {
        BodyHandler body = BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES);
        Router router = management.router();
        router.route().order(Integer.MIN_VALUE).handler(rc -> {
            if (main == null || !isOperatorPath(rc)) {
                rc.next();
                return;
            }
            ContextLocals.put(VIA_MANAGEMENT, Boolean.TRUE);
            body.handle(rc); // next() once the body is read
        });
        router.route().order(Integer.MIN_VALUE + 1).handler(rc -> {
            if (main == null || !isOperatorPath(rc)) {
                rc.next();
                return;
            }
            main.handleContext(rc);
        });
    }

    private void refuseUnlessViaManagement(RoutingContext rc) {
        if (!isOperatorPath(rc)
                || Boolean.TRUE.equals(ContextLocals.get(VIA_MANAGEMENT).orElse(null))) {
            rc.next();
            return;
        }
        rc.response()
                .setStatusCode(404)
                .putHeader(HttpHeaders.CONTENT_TYPE, ProblemMapper.PROBLEM_JSON)
                .end(NOT_FOUND);
    }

    private static boolean isOperatorPath(RoutingContext rc) {
        return isOperatorPath(rc.normalizedPath())
                || isOperatorPath(rc.request().path());
    }

    /**
     * Whether any router could read {@code path} as an operator path. The JAX-RS router drops matrix parameters
     * ({@code /v1/admin;x=1/operations} is {@code /v1/admin/operations} to it), so the path is read the most lenient
     * way: percent-decoded (an encoded slash too, until nothing is left to decode), matrix parameters, empty and dot
     * segments dropped, backslashes as slashes, in lower case. Reading too much as an operator path only answers 404
     * on the merchant port to a path that no merchant call has.
     */
    static boolean isOperatorPath(String path) {
        if (path == null) {
            return false;
        }
        String canonical = canonical(path);
        for (String prefix : OPERATOR_PREFIXES) {
            if (canonical.equals(prefix) || canonical.startsWith(prefix + "/")) {
                return true;
            }
        }
        return false;
    }

    private static String canonical(String path) {
        String decoded = path;
        for (int i = 0; i < 4; i++) {
            String once = percentDecoded(decoded);
            if (once.equals(decoded)) {
                break;
            }
            decoded = once;
        }
        Deque<String> segments = new ArrayDeque<>();
        for (String segment : decoded.replace('\\', '/').split("/")) {
            int matrix = segment.indexOf(';');
            String name = matrix < 0 ? segment : segment.substring(0, matrix);
            if (name.equals("..")) {
                segments.pollLast();
            } else if (!name.isEmpty() && !name.equals(".")) {
                segments.addLast(name.toLowerCase(Locale.ROOT));
            }
        }
        return "/" + String.join("/", segments);
    }

    /** Every valid %XX as its byte (read as Latin-1: only ASCII matters here); anything else as it is. */
    private static String percentDecoded(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            int high = i + 2 < text.length() ? Character.digit(text.charAt(i + 1), 16) : -1;
            int low = i + 2 < text.length() ? Character.digit(text.charAt(i + 2), 16) : -1;
            if (c == '%' && high >= 0 && low >= 0) {
                out.append((char) (high * 16 + low));
                i += 2;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
