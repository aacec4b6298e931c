package com.payments.api.console;

import static com.payments.api.console.ConsolePages.SESSION_COOKIE;
import static com.payments.api.console.ConsolePages.render;

import com.payments.api.common.CardNumbers;
import com.payments.api.common.Refusal;
import com.payments.api.console.ConsolePages.Templates;
import com.payments.api.console.ConsolePaymentsRepository.Event;
import com.payments.api.operations.OperatorAuditRepository;
import com.payments.api.operations.OperatorAuditRepository.Entry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.jboss.resteasy.reactive.RestCookie;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

/** The console's payment pages: the lookup and a payment's story. Viewing a story is audited. */
@Path("/console/payments")
@PermitAll
public class ConsolePaymentsResource {
    private final ConsolePages pages;
    private final ConsolePaymentsRepository payments;
    private final OperatorAuditRepository audit;
    private final Pool pool;

    public ConsolePaymentsResource(
            ConsolePages pages, ConsolePaymentsRepository payments, OperatorAuditRepository audit, Pool pool) {
        this.pages = pages;
        this.payments = payments;
        this.audit = audit;
        this.pool = pool;
    }

    @GET
    public Uni<Response> lookup(@RestCookie(SESSION_COOKIE) String cookie, @RestQuery String q) {
        String query = q == null ? "" : q.strip();
        if (query.length() > 255) {
            throw Refusal.invalid("invalid_query", "q must be at most 255 characters");
        }
        if (CardNumbers.containedIn(query)) {
            throw Refusal.invalid("card_data_rejected", "card numbers are never stored: search by id or orderId");
        }
        return pages.onGet(cookie, session -> {
            if (query.isEmpty()) {
                return render(Templates.payments(session, "", List.of()), 200);
            }
            return payments.findPayments(query)
                    .flatMap(matches -> matches.size() == 1
                            ? Uni.createFrom()
                                    .item(Response.seeOther(URI.create("/console/payments/"
                                                    + matches.get(0).id()))
                                            .build())
                            : render(Templates.payments(session, query, matches), 200));
        });
    }

    @GET
    @Path("/{id}")
    public Uni<Response> story(
            @RestCookie(SESSION_COOKIE) String cookie, @RestPath String id, @Context HttpServerRequest http) {
        UUID paymentId = ConsolePaymentsRepository.uuidOrNull(id);
        return pages.onGet(cookie, session -> {
            if (paymentId == null) {
                return ConsolePages.notFound(session, "No payment " + id);
            }
            return payments.payment(paymentId).flatMap(payment -> {
                if (payment == null) {
                    return ConsolePages.notFound(session, "No payment " + id);
                }
                return audit.record(
                                pool,
                                new Entry(
                                        session.operator(),
                                        "console",
                                        "view_payment",
                                        "payment:" + paymentId,
                                        null,
                                        ConsolePages.remote(http)))
                        .flatMap(v -> payments.story(paymentId))
                        .flatMap(events -> render(Templates.story(session, payment, sorted(events)), 200));
            });
        });
    }

    private static List<Event> sorted(List<Event> events) {
        return events.stream()
                .sorted(Comparator.comparing(Event::at, Comparator.nullsLast(Comparator.naturalOrder())))
                .toList();
    }
}
