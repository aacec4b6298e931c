package com.payments.sandbox.stripe;

import com.payments.sandbox.Reply;
import com.payments.sandbox.service.FaultSettings;
import com.payments.sandbox.service.PspService;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Base64;

/**
 * The Stripe-compatible API under {@code /stripe}: {@code https://api.stripe.com/v1/x} is {@code
 * http://<sandbox>/stripe/v1/x}. Plain Vert.x routes on the event loop (like {@code POST /v1/charges}): form-encoded
 * requests, JSON answers, Stripe's headers; latency and held-back answers use Vert.x timers, never a blocked thread.
 */
@ApplicationScoped
public class StripeRoutes {

    static final String PREFIX = "/stripe";

    /** The API version the sandbox answers as when the request names none. */
    public static final String API_VERSION = "2025-03-31.basil";

    private final StripeIntents intents;
    private final StripeRefunds refunds;
    private final StripeBalance balance;
    private final StripeIdempotency idempotency;
    private final StripeReport report;
    private final FaultSettings faults;
    private final Vertx vertx;

    public StripeRoutes(
            StripeIntents intents,
            StripeRefunds refunds,
            StripeBalance balance,
            StripeIdempotency idempotency,
            StripeReport report,
            FaultSettings faults,
            Vertx vertx) {
        this.intents = intents;
        this.refunds = refunds;
        this.balance = balance;
        this.idempotency = idempotency;
        this.report = report;
        this.faults = faults;
        this.vertx = vertx;
    }

    void register(@Observes Router router) {
        // Lower orders match first: search (-92) before /:id (-91), the unknown-URL answer (-90) last.
        router.route(PREFIX + "/*").order(-93).handler(BodyHandler.create(false).setBodyLimit(65_536));
        router.post(PREFIX + "/v1/payment_intents").order(-92).handler(ctx -> post(ctx, intents::create));
        router.post(PREFIX + "/v1/payment_intents/:id/capture")
                .order(-92)
                .handler(ctx -> post(
                        ctx, (account, key, params) -> intents.capture(account, key, ctx.pathParam("id"), params)));
        router.post(PREFIX + "/v1/payment_intents/:id/cancel")
                .order(-92)
                .handler(ctx ->
                        post(ctx, (account, key, params) -> intents.cancel(account, key, ctx.pathParam("id"), params)));
        router.get(PREFIX + "/v1/payment_intents/search")
                .order(-92)
                .handler(ctx -> read(ctx, () -> intents.search(query(ctx))));
        router.get(PREFIX + "/v1/payment_intents/:id")
                .order(-91)
                .handler(ctx -> read(ctx, () -> intents.retrieve(ctx.pathParam("id"))));
        router.post(PREFIX + "/v1/refunds").order(-92).handler(ctx -> post(ctx, refunds::create));
        router.get(PREFIX + "/v1/refunds").order(-92).handler(ctx -> read(ctx, () -> refunds.list(query(ctx))));
        router.get(PREFIX + "/v1/refunds/:id")
                .order(-91)
                .handler(ctx -> read(ctx, () -> refunds.retrieve(ctx.pathParam("id"))));
        router.get(PREFIX + "/v1/balance_transactions")
                .order(-92)
                .handler(ctx -> read(ctx, () -> balance.transactions(query(ctx))));
        router.get(PREFIX + "/reports/payout_reconciliation.itemized.csv")
                .order(-92)
                .handler(this::report);
        router.route(PREFIX + "/*").order(-90).handler(ctx -> send(ctx, StripeErrors.unknownUrl(), null));
    }

    /** A creating call: {@code (account, idempotency key, parameters)} to what it answers. */
    interface Creating {
        StripeIdempotency.Handled handle(String account, String key, StripeParams params);
    }

    private void post(RoutingContext ctx, Creating call) {
        String account = account(ctx.request());
        if (account == null) {
            send(ctx, unauthorized(ctx.request()), null);
            return;
        }
        Reply limited = idempotency.rateLimited();
        if (limited != null) {
            send(ctx, limited, null);
            return;
        }
        String key = ctx.request().getHeader("Idempotency-Key");
        if (key != null && !PspService.printable(key)) {
            send(
                    ctx,
                    StripeErrors.invalid(null, "Idempotency-Key must be 1-255 printable ASCII characters.", null),
                    null);
            return;
        }
        Buffer body = ctx.body().buffer();
        StripeParams params = StripeParams.parse(body == null ? null : body.toString(StandardCharsets.UTF_8));
        StripeIdempotency.Handled handled = call.handle(account, key, params);
        long latency = faults.latencyMs();
        Runnable answer = () -> {
            handled.executed().run();
            Reply reply = handled.reply();
            if (reply.delayMs() > 0) {
                vertx.setTimer(reply.delayMs(), id -> send(ctx, reply, key));
            } else {
                send(ctx, reply, key);
            }
        };
        if (latency > 0) {
            vertx.setTimer(latency, id -> answer.run());
        } else {
            answer.run();
        }
    }

    private void read(RoutingContext ctx, java.util.function.Supplier<Reply> call) {
        if (account(ctx.request()) == null) {
            send(ctx, unauthorized(ctx.request()), null);
            return;
        }
        Reply fault = idempotency.readFault();
        Reply reply = fault != null ? fault : call.get();
        long latency = faults.latencyMs();
        if (latency > 0) {
            vertx.setTimer(latency, id -> send(ctx, reply, null));
        } else {
            send(ctx, reply, null);
        }
    }

    private void report(RoutingContext ctx) {
        if (account(ctx.request()) == null) {
            send(ctx, unauthorized(ctx.request()), null);
            return;
        }
        LocalDate day = StripeBalance.payoutDay(ctx.request().getParam("payout"));
        if (day == null) {
            send(ctx, StripeErrors.invalid("resource_missing", "No such payout.", "payout"), null);
            return;
        }
        ctx.response()
                .putHeader("Content-Type", "text/csv")
                .putHeader("Request-Id", PspService.newId("req_"))
                .end(report.itemized(day));
    }

    private static StripeParams query(RoutingContext ctx) {
        return StripeParams.parse(ctx.request().query());
    }

    /**
     * The secret key of the request ({@code Authorization: Bearer sk_test_…}, or HTTP Basic with the key as user
     * name, as Stripe accepts); null when there is none. Any {@code sk_test_} or {@code rk_test_} key is an account
     * of its own for idempotency keys.
     */
    static String account(HttpServerRequest request) {
        String header = request.getHeader("Authorization");
        if (header == null) {
            return null;
        }
        String key = null;
        if (header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            key = header.substring(7).trim();
        } else if (header.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String decoded = new String(
                        Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                key = colon < 0 ? decoded : decoded.substring(0, colon);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return key != null && (key.startsWith("sk_test_") || key.startsWith("rk_test_")) && PspService.printable(key)
                ? key
                : null;
    }

    private static Reply unauthorized(HttpServerRequest request) {
        return request.getHeader("Authorization") == null
                ? StripeErrors.unauthorized(
                        "You did not provide an API key. Send it as a Bearer token in the" + " Authorization header.")
                : StripeErrors.unauthorized("Invalid API Key provided; the sandbox takes sk_test_ keys only.");
    }

    private static void send(RoutingContext ctx, Reply reply, String idempotencyKey) {
        HttpServerResponse response = ctx.response();
        if (response.closed() || response.ended()) {
            return;
        }
        String version = ctx.request().getHeader("Stripe-Version");
        response.setStatusCode(reply.status())
                .putHeader("Content-Type", "application/json")
                .putHeader("Request-Id", PspService.newId("req_"))
                .putHeader("Stripe-Version", version != null ? version : API_VERSION);
        if (idempotencyKey != null) {
            response.putHeader("Idempotency-Key", idempotencyKey);
        }
        if (reply.replayed()) {
            response.putHeader("Idempotent-Replayed", "true");
        }
        if (reply.status() == 409 || reply.status() == 429) {
            response.putHeader("Stripe-Should-Retry", "true");
        } else if (reply.status() == 400 || reply.status() == 402) {
            response.putHeader("Stripe-Should-Retry", "false");
        }
        response.end(Buffer.buffer(reply.body()));
    }
}
