package com.payments.api.console;

import static com.payments.api.console.ConsolePages.LOGIN_COOKIE;
import static com.payments.api.console.ConsolePages.SESSION_COOKIE;
import static com.payments.api.console.ConsolePages.remote;
import static com.payments.api.console.ConsolePages.render;

import com.payments.api.config.ApiConfig;
import com.payments.api.console.ConsolePages.Templates;
import com.payments.api.merchants.AuthFailureLimiter;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import org.jboss.resteasy.reactive.RestCookie;
import org.jboss.resteasy.reactive.RestForm;

/**
 * The operator console's front door (docs/console.md): login, logout and the live page at {@code /console}. The other
 * pages have a resource each: {@link ConsoleOperationsResource}, {@link ConsolePaymentsResource} and {@link
 * ConsoleReconResource}; what they share is in {@link ConsolePages}. The console checks its own session, not a bearer
 * credential: open to every caller for the API's authentication.
 */
@Path("/console")
@PermitAll
public class ConsoleResource {
    private static final int LIVE_ROWS = 100;

    private final ConsolePages pages;
    private final ConsoleSessions sessions;
    private final ConsoleLiveRepository live;
    private final AuthFailureLimiter failures;
    private final ApiConfig api;

    public ConsoleResource(
            ConsolePages pages,
            ConsoleSessions sessions,
            ConsoleLiveRepository live,
            AuthFailureLimiter failures,
            ApiConfig api) {
        this.pages = pages;
        this.sessions = sessions;
        this.live = live;
        this.failures = failures;
        this.api = api;
    }

    @GET
    @Path("/login")
    public Uni<Response> loginPage() {
        String csrf = ConsoleSessions.randomToken();
        return render(Templates.login(null, csrf, null, ""), 200).map(r -> Response.fromResponse(r)
                .header(HttpHeaders.SET_COOKIE, pages.cookie(LOGIN_COOKIE, csrf, 600))
                .build());
    }

    @POST
    @Path("/login")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> login(
            @RestCookie(LOGIN_COOKIE) String loginCookie,
            @RestForm String csrf,
            @RestForm String operator,
            @RestForm String token,
            @Context HttpServerRequest http) {
        if (!ConsoleSessions.sameToken(loginCookie, csrf)) {
            return ConsolePages.forbidden(null);
        }
        String client = AuthFailureLimiter.clientOf(http.remoteAddress());
        String name = operator == null ? "" : operator.strip();
        if (!ConsoleSessions.OPERATOR_NAME.matcher(name).matches()) {
            return render(Templates.login(null, csrf, "Your name: 1-100 letters, digits, . _ @ or -", ""), 400);
        }
        if (!sessions.isOperatorToken(token)) {
            failures.takeFailure(client); // 429 after too many wrong tokens from this address
            return sessions.refused(name, remote(http))
                    .flatMap(v -> render(Templates.login(null, csrf, "That is not the operator token.", name), 401));
        }
        return sessions.start(name, remote(http)).map(login -> Response.seeOther(URI.create("/console"))
                .header(HttpHeaders.SET_COOKIE, pages.cookie(SESSION_COOKIE, login.cookieValue(), pages.ttlSeconds()))
                .header(HttpHeaders.SET_COOKIE, pages.cookie(LOGIN_COOKIE, "", 0))
                .build());
    }

    @POST
    @Path("/logout")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> logout(
            @RestCookie(SESSION_COOKIE) String cookie, @RestForm String csrf, @Context HttpServerRequest http) {
        return pages.onPost(cookie, csrf, session -> sessions.end(cookie, session, remote(http))
                .map(v -> Response.seeOther(URI.create("/console/login"))
                        .header(HttpHeaders.SET_COOKIE, pages.cookie(SESSION_COOKIE, "", 0))
                        .build()));
    }

    /** The live page: what is open right now. */
    @GET
    public Uni<Response> live(@RestCookie(SESSION_COOKIE) String cookie) {
        return pages.onGet(cookie, session -> live.counts(api.psp().stuckAfter())
                .flatMap(counts -> live.openByReason().flatMap(open -> live.unresolved(
                                api.psp().stuckAfter(), LIVE_ROWS)
                        .flatMap(unresolved -> live.pendingRefunds(LIVE_ROWS).flatMap(refunds -> live.deadLetters(
                                        LIVE_ROWS)
                                .flatMap(dead -> render(
                                        Templates.live(session, counts, open, unresolved, refunds, dead), 200)))))));
    }
}
