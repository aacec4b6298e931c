package com.payments.api.console;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * Security headers of every console answer: a strict Content-Security-Policy (only the console's own stylesheet; no
 * script at all, inline or not; forms post only to the console; no framing), no caching of operator pages, no
 * referrer, no MIME sniffing.
 */
public class ConsoleHeaders {
    static final String CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
            + " frame-ancestors 'none'; base-uri 'none'";

    @ServerResponseFilter
    public void secure(ContainerRequestContext request, ContainerResponseContext response) {
        if (!request.getUriInfo().getPath().startsWith("/console")) {
            return;
        }
        var headers = response.getHeaders();
        headers.putSingle("Content-Security-Policy", CSP);
        headers.putSingle("Cache-Control", "no-store");
        headers.putSingle("Referrer-Policy", "no-referrer");
        headers.putSingle("X-Content-Type-Options", "nosniff");
        headers.putSingle("X-Frame-Options", "DENY");
    }
}
