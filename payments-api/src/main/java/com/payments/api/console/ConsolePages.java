package com.payments.api.console;

import com.payments.api.common.Refusal;
import com.payments.api.config.ConsoleConfig;
import com.payments.api.console.ConsoleLiveRepository.Counts;
import com.payments.api.console.ConsoleLiveRepository.DeadLetter;
import com.payments.api.console.ConsoleLiveRepository.InFlight;
import com.payments.api.console.ConsoleLiveRepository.OpenByReason;
import com.payments.api.console.ConsoleOperationsRepository.AuditRow;
import com.payments.api.console.ConsoleOperationsRepository.OpsItem;
import com.payments.api.console.ConsolePaymentsRepository.Event;
import com.payments.api.console.ConsolePaymentsRepository.Listed;
import com.payments.api.console.ConsolePaymentsRepository.PaymentRow;
import com.payments.api.console.ConsoleReconRepository.Break;
import com.payments.api.console.ConsoleReconRepository.Run;
import com.payments.api.console.ConsoleSessions.Session;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.function.Function;

/**
 * What every console page shares (docs/console.md): the templates, the session check of a GET (else a redirect to
 * the login page) and of a form POST (401 without a session, 403 without the session's CSRF token), rendering, the
 * cookies and the checks of query parameters.
 */
@ApplicationScoped
public class ConsolePages {
    static final String SESSION_COOKIE = "console_session";
    static final String LOGIN_COOKIE = "console_login";
    private static final String HTML = MediaType.TEXT_HTML + ";charset=UTF-8";

    @CheckedTemplate(basePath = "console")
    static class Templates {
        /** {@code session} is always null here; the layout asks for it. */
        static native TemplateInstance login(Session session, String csrf, String message, String operator);

        static native TemplateInstance live(
                Session session,
                Counts counts,
                List<OpenByReason> open,
                List<InFlight> unresolved,
                List<InFlight> refunds,
                List<DeadLetter> deadLetters);

        static native TemplateInstance operations(
                Session session,
                ConsoleOperationsResource.Filter filter,
                List<String> reasons,
                List<OpsItem> items,
                String next);

        static native TemplateInstance item(Session session, OpsItem item, List<AuditRow> audit, String message);

        static native TemplateInstance payments(Session session, String query, List<Listed> matches);

        static native TemplateInstance story(Session session, PaymentRow payment, List<Event> events);

        static native TemplateInstance recon(
                Session session, BreakChart chart, List<ConsoleReconResource.RunView> runs, String next);

        static native TemplateInstance reconDay(
                Session session, LocalDate date, List<Run> runs, List<Break> breaks, String next);

        static native TemplateInstance error(Session session, int status, String title, String message);
    }

    private final ConsoleSessions sessions;
    private final ConsoleConfig config;

    public ConsolePages(ConsoleSessions sessions, ConsoleConfig config) {
        this.sessions = sessions;
        this.config = config;
    }

    /** A page for a logged-in operator; without a session, a redirect to the login page. */
    Uni<Response> onGet(String cookie, Function<Session, Uni<Response>> page) {
        return sessions.find(cookie)
                .flatMap(session -> session == null
                        ? Uni.createFrom()
                                .item(Response.seeOther(URI.create("/console/login"))
                                        .build())
                        : page.apply(session));
    }

    /** A form post: 401 without a session, 403 without the session's CSRF token. */
    Uni<Response> onPost(String cookie, String csrf, Function<Session, Uni<Response>> action) {
        return sessions.find(cookie).flatMap(session -> {
            if (session == null) {
                return render(Templates.error(null, 401, "Not logged in", "Log in to the console first."), 401);
            }
            if (!ConsoleSessions.sameToken(session.csrfToken(), csrf)) {
                return forbidden(session);
            }
            return action.apply(session);
        });
    }

    static Uni<Response> forbidden(Session session) {
        return render(
                Templates.error(
                        session,
                        403,
                        "Forbidden",
                        "The form's CSRF token is missing or wrong: reload the page and retry."),
                403);
    }

    static Uni<Response> notFound(Session session, String message) {
        return render(Templates.error(session, 404, "Not found", message), 404);
    }

    static Uni<Response> render(TemplateInstance template, int status) {
        return template.createUni()
                .map(html -> Response.status(status).type(HTML).entity(html).build());
    }

    /** The size of a page of a list (operations items, runs, breaks). */
    int pageSize() {
        return config.pageSize();
    }

    String cookie(String name, String value, long maxAgeSeconds) {
        return name + "=" + value + "; Path=/console; Max-Age=" + maxAgeSeconds + "; HttpOnly; SameSite=Strict"
                + (config.secureCookie() ? "; Secure" : "");
    }

    long ttlSeconds() {
        return config.sessionTtl().toSeconds();
    }

    static String remote(HttpServerRequest http) {
        return http.remoteAddress() == null ? null : http.remoteAddress().hostAddress();
    }

    static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }

    static String enc(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** A keyset cursor ({@code after}): 0 when absent, else a non-negative integer (400 otherwise). */
    static long cursor(String after) {
        if (after == null || after.isEmpty()) {
            return 0;
        }
        try {
            long value = Long.parseLong(after);
            if (value >= 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw Refusal.invalid("invalid_cursor", "after must be a non-negative integer");
    }

    static LocalDate date(String value) {
        try {
            return LocalDate.parse(value);
        } catch (DateTimeParseException e) {
            throw Refusal.invalid("invalid_date", "the date must be yyyy-mm-dd");
        }
    }
}
