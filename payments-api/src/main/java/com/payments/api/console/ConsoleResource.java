package com.payments.api.console;

import com.payments.api.common.CardNumbers;
import com.payments.api.common.Refusal;
import com.payments.api.config.ApiConfig;
import com.payments.api.config.ConsoleConfig;
import com.payments.api.console.ConsoleRepository.Break;
import com.payments.api.console.ConsoleRepository.Event;
import com.payments.api.console.ConsoleRepository.OpsItem;
import com.payments.api.console.ConsoleRepository.Run;
import com.payments.api.console.ConsoleSessions.Session;
import com.payments.api.merchants.AuthFailureLimiter;
import com.payments.api.operations.OperationsService;
import com.payments.api.operations.OperatorAuditRepository;
import com.payments.api.operations.OperatorAuditRepository.Entry;
import com.payments.api.rest.PathParams;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
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
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import org.jboss.resteasy.reactive.RestCookie;
import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * The operator console (docs/console.md): server-rendered pages for the live state, the operations queue, the
 * reconciliation and a payment's story. Every page needs a console session (else a redirect to the login page, or
 * 401 for a POST); every POST also needs the session's CSRF token (else 403). Only resolving an operations item
 * changes anything, through {@link OperationsService}, the operator API's rule. The console checks its own session,
 * not a bearer credential: open to every caller for the API's authentication.
 */
@Path("/console")
@PermitAll
public class ConsoleResource {
    static final String SESSION_COOKIE = "console_session";
    static final String LOGIN_COOKIE = "console_login";
    static final int CHART_DAYS = 30;
    private static final int LIVE_ROWS = 100;
    private static final int MAX_NOTE = 500;
    private static final String HTML = MediaType.TEXT_HTML + ";charset=UTF-8";

    @CheckedTemplate(basePath = "console")
    static class Templates {
        /** {@code session} is always null here; the layout asks for it. */
        static native TemplateInstance login(Session session, String csrf, String message, String operator);

        static native TemplateInstance live(
                Session session,
                ConsoleRepository.Counts counts,
                List<ConsoleRepository.OpenByReason> open,
                List<ConsoleRepository.Unresolved> unresolved,
                List<ConsoleRepository.PendingRefund> refunds,
                List<ConsoleRepository.DeadLetter> deadLetters);

        static native TemplateInstance operations(
                Session session, Filter filter, List<String> reasons, List<OpsItem> items, String next);

        static native TemplateInstance item(
                Session session, OpsItem item, List<ConsoleRepository.AuditRow> audit, String message);

        static native TemplateInstance payments(Session session, String query, List<UUID> matches);

        static native TemplateInstance story(Session session, ConsoleRepository.PaymentRow payment, List<Event> events);

        static native TemplateInstance recon(Session session, BreakChart chart, List<RunView> runs, String next);

        static native TemplateInstance reconDay(
                Session session, LocalDate date, List<Run> runs, List<Break> breaks, String next);

        static native TemplateInstance error(Session session, int status, String title, String message);
    }

    /** A run's summary as the runs table shows it ("-" where the run stored none). */
    public record RunView(Run run, String lines, String matched, String breaksByKind, String open, String reported) {
        static RunView of(Run run) {
            JsonObject s = run.summary();
            if (s == null) {
                return new RunView(run, "-", "-", "-", "-", "-");
            }
            JsonObject outcomes = s.getJsonObject("outcomes", new JsonObject());
            JsonObject breaks = s.getJsonObject("breaks", new JsonObject());
            StringBuilder kinds = new StringBuilder();
            for (String kind : new TreeSet<>(breaks.fieldNames())) {
                Object n = breaks.getValue(kind);
                if (n instanceof Number number && number.longValue() > 0) {
                    kinds.append(kinds.isEmpty() ? "" : ", ")
                            .append(kind)
                            .append(' ')
                            .append(number);
                }
            }
            return new RunView(
                    run,
                    String.valueOf(s.getValue("linesLoaded", "-")),
                    String.valueOf(outcomes.getValue("MATCHED", 0)),
                    kinds.isEmpty() ? "none" : kinds.toString(),
                    String.valueOf(s.getValue("openBreaks", "-")),
                    String.valueOf(s.getValue("reportedBreaks", "-")));
        }
    }

    /** The operations list's filter. */
    public record Filter(String status, String reason, String subject) {}

    private final ConsoleSessions sessions;
    private final ConsoleRepository console;
    private final OperationsService resolutions;
    private final OperatorAuditRepository audit;
    private final AuthFailureLimiter failures;
    private final ConsoleConfig config;
    private final ApiConfig api;
    private final Pool pool;

    public ConsoleResource(
            ConsoleSessions sessions,
            ConsoleRepository console,
            OperationsService resolutions,
            OperatorAuditRepository audit,
            AuthFailureLimiter failures,
            ConsoleConfig config,
            ApiConfig api,
            Pool pool) {
        this.sessions = sessions;
        this.console = console;
        this.resolutions = resolutions;
        this.audit = audit;
        this.failures = failures;
        this.config = config;
        this.api = api;
        this.pool = pool;
    }

    // --- login -------------------------------------------------------------------------------------------------------

    @GET
    @Path("/login")
    public Uni<Response> loginPage() {
        String csrf = ConsoleSessions.randomToken();
        return render(Templates.login(null, csrf, null, ""), 200).map(r -> Response.fromResponse(r)
                .header(HttpHeaders.SET_COOKIE, cookie(LOGIN_COOKIE, csrf, 600))
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
            return forbidden(null);
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
                .header(HttpHeaders.SET_COOKIE, cookie(SESSION_COOKIE, login.cookieValue(), ttlSeconds()))
                .header(HttpHeaders.SET_COOKIE, cookie(LOGIN_COOKIE, "", 0))
                .build());
    }

    @POST
    @Path("/logout")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> logout(
            @RestCookie(SESSION_COOKIE) String cookie, @RestForm String csrf, @Context HttpServerRequest http) {
        return onPost(cookie, csrf, session -> sessions.end(cookie, session, remote(http))
                .map(v -> Response.seeOther(URI.create("/console/login"))
                        .header(HttpHeaders.SET_COOKIE, cookie(SESSION_COOKIE, "", 0))
                        .build()));
    }

    // --- live state --------------------------------------------------------------------------------------------------

    @GET
    public Uni<Response> live(@RestCookie(SESSION_COOKIE) String cookie) {
        return onGet(cookie, session -> console.counts(api.psp().stuckAfter()).flatMap(counts -> console.openByReason()
                .flatMap(open -> console.unresolved(api.psp().stuckAfter(), LIVE_ROWS)
                        .flatMap(unresolved -> console.pendingRefunds(LIVE_ROWS).flatMap(refunds -> console.deadLetters(
                                        LIVE_ROWS)
                                .flatMap(dead -> render(
                                        Templates.live(session, counts, open, unresolved, refunds, dead), 200)))))));
    }

    // --- operations queue --------------------------------------------------------------------------------------------

    @GET
    @Path("/operations")
    public Uni<Response> operations(
            @RestCookie(SESSION_COOKIE) String cookie,
            @RestQuery String status,
            @RestQuery String reason,
            @RestQuery String subject,
            @RestQuery String after) {
        String wanted = status == null || status.isEmpty() ? "OPEN" : status;
        if (!wanted.equals("OPEN") && !wanted.equals("RESOLVED")) {
            throw Refusal.invalid("invalid_status", "status must be OPEN or RESOLVED");
        }
        String reasonFilter = blankToNull(reason);
        String subjectFilter = blankToNull(subject);
        long from = cursor(after);
        int size = config.pageSize();
        Filter filter = new Filter(
                wanted, reasonFilter == null ? "" : reasonFilter, subjectFilter == null ? "" : subjectFilter);
        return onGet(cookie, session -> console.operationsReasons()
                .flatMap(reasons -> console.operations(wanted, reasonFilter, subjectFilter, from, size)
                        .flatMap(rows -> {
                            List<OpsItem> page = rows.subList(0, Math.min(size, rows.size()));
                            String next = rows.size() > size
                                    ? "/console/operations?status=" + wanted + "&reason=" + enc(filter.reason())
                                            + "&subject=" + enc(filter.subject()) + "&after="
                                            + page.get(page.size() - 1).id()
                                    : null;
                            return render(Templates.operations(session, filter, reasons, page, next), 200);
                        })));
    }

    @GET
    @Path("/operations/{id}")
    public Uni<Response> item(@RestCookie(SESSION_COOKIE) String cookie, @RestPath String id) {
        long itemId = PathParams.positiveLong(id);
        return onGet(cookie, session -> itemPage(session, itemId, null, 200));
    }

    @POST
    @Path("/operations/{id}/resolve")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> resolve(
            @RestCookie(SESSION_COOKIE) String cookie,
            @RestPath String id,
            @RestForm String csrf,
            @RestForm String note,
            @Context HttpServerRequest http) {
        long itemId = PathParams.positiveLong(id);
        return onPost(cookie, csrf, session -> {
            String text = note == null ? "" : note.strip();
            if (text.isEmpty() || text.length() > MAX_NOTE) {
                return itemPage(session, itemId, "A note of 1-500 characters is required.", 400);
            }
            if (CardNumbers.containedIn(text)) { // the operator API's rule for operator texts (card_data_rejected)
                return itemPage(
                        session, itemId, "The note looks like it holds a card number: leave card data out.", 400);
            }
            return resolutions
                    .resolve(itemId, text, session.operator(), "console", remote(http))
                    .map(resolved -> Response.seeOther(URI.create("/console/operations/" + itemId))
                            .build())
                    .onFailure(Refusal.class)
                    .recoverWithUni(refusal -> ((Refusal) refusal).kind() == Refusal.Kind.CONFLICT
                            ? itemPage(session, itemId, "This item was already resolved; the first note stays.", 409)
                            : Uni.createFrom().failure(refusal));
        });
    }

    private Uni<Response> itemPage(Session session, long itemId, String message, int status) {
        return console.operationsItem(itemId).flatMap(item -> {
            if (item == null) {
                return render(Templates.error(session, 404, "Not found", "No operations item " + itemId), 404);
            }
            return console.auditOf("operations_item:" + itemId)
                    .flatMap(rows -> render(Templates.item(session, item, rows, message), status));
        });
    }

    // --- a payment's story -------------------------------------------------------------------------------------------

    @GET
    @Path("/payments")
    public Uni<Response> lookup(@RestCookie(SESSION_COOKIE) String cookie, @RestQuery String q) {
        String query = q == null ? "" : q.strip();
        if (query.length() > 255) {
            throw Refusal.invalid("invalid_query", "q must be at most 255 characters");
        }
        if (CardNumbers.containedIn(query)) {
            throw Refusal.invalid("card_data_rejected", "card numbers are never stored: search by id or orderId");
        }
        return onGet(cookie, session -> {
            if (query.isEmpty()) {
                return render(Templates.payments(session, "", List.of()), 200);
            }
            return console.findPayments(query)
                    .flatMap(matches -> matches.size() == 1
                            ? Uni.createFrom()
                                    .item(Response.seeOther(URI.create("/console/payments/" + matches.get(0)))
                                            .build())
                            : render(Templates.payments(session, query, matches), 200));
        });
    }

    @GET
    @Path("/payments/{id}")
    public Uni<Response> story(
            @RestCookie(SESSION_COOKIE) String cookie, @RestPath String id, @Context HttpServerRequest http) {
        UUID paymentId = ConsoleRepository.uuidOrNull(id);
        return onGet(cookie, session -> {
            if (paymentId == null) {
                return render(Templates.error(session, 404, "Not found", "No payment " + id), 404);
            }
            return console.payment(paymentId).flatMap(payment -> {
                if (payment == null) {
                    return render(Templates.error(session, 404, "Not found", "No payment " + id), 404);
                }
                return audit.record(
                                pool,
                                new Entry(
                                        session.operator(),
                                        "console",
                                        "view_payment",
                                        "payment:" + paymentId,
                                        null,
                                        remote(http)))
                        .flatMap(v -> console.story(paymentId))
                        .flatMap(events -> render(Templates.story(session, payment, sorted(events)), 200));
            });
        });
    }

    private static List<Event> sorted(List<Event> events) {
        return events.stream()
                .sorted(Comparator.comparing(Event::at, Comparator.nullsLast(Comparator.naturalOrder())))
                .toList();
    }

    // --- reconciliation ----------------------------------------------------------------------------------------------

    @GET
    @Path("/recon")
    public Uni<Response> recon(@RestCookie(SESSION_COOKIE) String cookie, @RestQuery String before) {
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        LocalDate until = before == null || before.isEmpty() ? today.plusDays(1) : date(before);
        int size = config.pageSize();
        return onGet(cookie, session -> console.breaksPerDay(today.minusDays(CHART_DAYS - 1), today)
                .flatMap(perDay -> console.lastRuns(until, size).flatMap(rows -> {
                    List<Run> page = rows.subList(0, Math.min(size, rows.size()));
                    String next = rows.size() > size
                            ? "/console/recon?before="
                                    + page.get(page.size() - 1).businessDate()
                            : null;
                    BreakChart chart = BreakChart.of(today, CHART_DAYS, perDay);
                    return render(
                            Templates.recon(
                                    session,
                                    chart,
                                    page.stream().map(RunView::of).toList(),
                                    next),
                            200);
                })));
    }

    @GET
    @Path("/recon/{date}")
    public Uni<Response> reconDay(
            @RestCookie(SESSION_COOKIE) String cookie, @RestPath String date, @RestQuery String after) {
        LocalDate day = date(date);
        long from = cursor(after);
        int size = config.pageSize();
        return onGet(cookie, session -> console.runsOf(day)
                .flatMap(runs -> console.breaks(day, from, size).flatMap(rows -> {
                    List<Break> page = rows.subList(0, Math.min(size, rows.size()));
                    String next = rows.size() > size
                            ? "/console/recon/" + day + "?after="
                                    + page.get(page.size() - 1).id()
                            : null;
                    return render(Templates.reconDay(session, day, runs, page, next), 200);
                })));
    }

    // --- plumbing ----------------------------------------------------------------------------------------------------

    /** A page for a logged-in operator; without a session, a redirect to the login page. */
    private Uni<Response> onGet(String cookie, Function<Session, Uni<Response>> page) {
        return sessions.find(cookie)
                .flatMap(session -> session == null
                        ? Uni.createFrom()
                                .item(Response.seeOther(URI.create("/console/login"))
                                        .build())
                        : page.apply(session));
    }

    /** A form post: 401 without a session, 403 without the session's CSRF token. */
    private Uni<Response> onPost(String cookie, String csrf, Function<Session, Uni<Response>> action) {
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

    private Uni<Response> forbidden(Session session) {
        return render(
                Templates.error(
                        session,
                        403,
                        "Forbidden",
                        "The form's CSRF token is missing or wrong: reload the page and retry."),
                403);
    }

    private static Uni<Response> render(TemplateInstance template, int status) {
        return template.createUni()
                .map(html -> Response.status(status).type(HTML).entity(html).build());
    }

    private String cookie(String name, String value, long maxAgeSeconds) {
        return name + "=" + value + "; Path=/console; Max-Age=" + maxAgeSeconds + "; HttpOnly; SameSite=Strict"
                + (config.secureCookie() ? "; Secure" : "");
    }

    private long ttlSeconds() {
        return config.sessionTtl().toSeconds();
    }

    private static String remote(HttpServerRequest http) {
        return http.remoteAddress() == null ? null : http.remoteAddress().hostAddress();
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }

    private static String enc(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static long cursor(String after) {
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

    private static LocalDate date(String value) {
        try {
            return LocalDate.parse(value);
        } catch (DateTimeParseException e) {
            throw Refusal.invalid("invalid_date", "the date must be yyyy-mm-dd");
        }
    }
}
