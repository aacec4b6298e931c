package com.payments.api.console;

import static com.payments.api.console.ConsolePages.SESSION_COOKIE;
import static com.payments.api.console.ConsolePages.render;

import com.payments.api.console.ConsolePages.Templates;
import com.payments.api.console.ConsoleReconRepository.Break;
import com.payments.api.console.ConsoleReconRepository.Run;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TreeSet;
import org.jboss.resteasy.reactive.RestCookie;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/** The console's reconciliation pages: the breaks chart with the runs, and one business date's runs and breaks. */
@Path("/console/recon")
@PermitAll
public class ConsoleReconResource {
    static final int CHART_DAYS = 30;

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

    private final ConsolePages pages;
    private final ConsoleReconRepository recon;

    public ConsoleReconResource(ConsolePages pages, ConsoleReconRepository recon) {
        this.pages = pages;
        this.recon = recon;
    }

    @GET
    public Uni<Response> recon(@RestCookie(SESSION_COOKIE) String cookie, @RestQuery String before) {
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        LocalDate until = before == null || before.isEmpty() ? today.plusDays(1) : ConsolePages.date(before);
        int size = pages.pageSize();
        return pages.onGet(cookie, session -> recon.breaksPerDay(today.minusDays(CHART_DAYS - 1), today)
                .flatMap(perDay -> recon.lastRuns(until, size).flatMap(rows -> {
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
    @Path("/{date}")
    public Uni<Response> reconDay(
            @RestCookie(SESSION_COOKIE) String cookie, @RestPath String date, @RestQuery String after) {
        LocalDate day = ConsolePages.date(date);
        long from = ConsolePages.cursor(after);
        int size = pages.pageSize();
        return pages.onGet(cookie, session -> recon.runsOf(day)
                .flatMap(runs -> recon.breaks(day, from, size).flatMap(rows -> {
                    List<Break> page = rows.subList(0, Math.min(size, rows.size()));
                    String next = rows.size() > size
                            ? "/console/recon/" + day + "?after="
                                    + page.get(page.size() - 1).id()
                            : null;
                    return render(Templates.reconDay(session, day, runs, page, next), 200);
                })));
    }
}
