package com.payments.api.console;

import static com.payments.api.console.ConsolePages.SESSION_COOKIE;
import static com.payments.api.console.ConsolePages.render;

import com.payments.api.common.CardNumbers;
import com.payments.api.common.Refusal;
import com.payments.api.console.ConsoleOperationsRepository.OpsItem;
import com.payments.api.console.ConsolePages.Templates;
import com.payments.api.console.ConsoleSessions.Session;
import com.payments.api.operations.OperationsService;
import com.payments.api.rest.PathParams;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.List;
import org.jboss.resteasy.reactive.RestCookie;
import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/**
 * The console's operations queue pages: the list, an item with its audit, and resolving it. Only resolving changes
 * anything, through {@link OperationsService}, the operator API's rule.
 */
@Path("/console/operations")
@PermitAll
public class ConsoleOperationsResource {
    private static final int MAX_NOTE = 500;

    /** The operations list's filter. */
    public record Filter(String status, String reason, String subject) {}

    private final ConsolePages pages;
    private final ConsoleOperationsRepository operations;
    private final OperationsService resolutions;

    public ConsoleOperationsResource(
            ConsolePages pages, ConsoleOperationsRepository operations, OperationsService resolutions) {
        this.pages = pages;
        this.operations = operations;
        this.resolutions = resolutions;
    }

    @GET
    public Uni<Response> list(
            @RestCookie(SESSION_COOKIE) String cookie,
            @RestQuery String status,
            @RestQuery String reason,
            @RestQuery String subject,
            @RestQuery String after) {
        String wanted = status == null || status.isEmpty() ? "OPEN" : status;
        if (!wanted.equals("OPEN") && !wanted.equals("RESOLVED")) {
            throw Refusal.invalid("invalid_status", "status must be OPEN or RESOLVED");
        }
        String reasonFilter = ConsolePages.blankToNull(reason);
        String subjectFilter = ConsolePages.blankToNull(subject);
        long from = ConsolePages.cursor(after);
        int size = pages.pageSize();
        Filter filter = new Filter(
                wanted, reasonFilter == null ? "" : reasonFilter, subjectFilter == null ? "" : subjectFilter);
        return pages.onGet(cookie, session -> operations.operationsReasons().flatMap(reasons -> operations
                .operations(wanted, reasonFilter, subjectFilter, from, size)
                .flatMap(rows -> {
                    List<OpsItem> page = rows.subList(0, Math.min(size, rows.size()));
                    String next = rows.size() > size
                            ? "/console/operations?status=" + wanted + "&reason="
                                    + ConsolePages.enc(filter.reason())
                                    + "&subject=" + ConsolePages.enc(filter.subject()) + "&after="
                                    + page.get(page.size() - 1).id()
                            : null;
                    return render(Templates.operations(session, filter, reasons, page, next), 200);
                })));
    }

    @GET
    @Path("/{id}")
    public Uni<Response> item(@RestCookie(SESSION_COOKIE) String cookie, @RestPath String id) {
        long itemId = PathParams.positiveLong(id);
        return pages.onGet(cookie, session -> itemPage(session, itemId, null, 200));
    }

    @POST
    @Path("/{id}/resolve")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Uni<Response> resolve(
            @RestCookie(SESSION_COOKIE) String cookie,
            @RestPath String id,
            @RestForm String csrf,
            @RestForm String note,
            @Context HttpServerRequest http) {
        long itemId = PathParams.positiveLong(id);
        return pages.onPost(cookie, csrf, session -> {
            String text = note == null ? "" : note.strip();
            if (text.isEmpty() || text.length() > MAX_NOTE) {
                return itemPage(session, itemId, "A note of 1-500 characters is required.", 400);
            }
            if (CardNumbers.containedIn(text)) { // the operator API's rule for operator texts (card_data_rejected)
                return itemPage(
                        session, itemId, "The note looks like it holds a card number: leave card data out.", 400);
            }
            return resolutions
                    .resolve(itemId, text, session.operator(), "console", ConsolePages.remote(http))
                    .map(resolved -> Response.seeOther(URI.create("/console/operations/" + itemId))
                            .build())
                    .onFailure(Refusal.class)
                    .recoverWithUni(refusal -> ((Refusal) refusal).kind() == Refusal.Kind.CONFLICT
                            ? itemPage(session, itemId, "This item was already resolved; the first note stays.", 409)
                            : Uni.createFrom().failure(refusal));
        });
    }

    private Uni<Response> itemPage(Session session, long itemId, String message, int status) {
        return operations.operationsItem(itemId).flatMap(item -> {
            if (item == null) {
                return ConsolePages.notFound(session, "No operations item " + itemId);
            }
            return operations
                    .auditOf("operations_item:" + itemId)
                    .flatMap(rows -> render(Templates.item(session, item, rows, message), status));
        });
    }
}
