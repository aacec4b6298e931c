package com.payments.psp.stripe;

import static com.payments.psp.PspHttp.encode;
import static com.payments.psp.PspHttp.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.psp.NeverSentException;
import com.payments.psp.PspCallMetrics;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspHttp;
import com.payments.psp.PspSaturatedException;
import com.payments.psp.port.AmountRefusal;
import com.payments.psp.port.CaptureRequest;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundQuery;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.VoidRequest;
import com.payments.psp.port.WebhookRejectedException;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpMethod;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.ext.web.client.HttpRequest;
import io.vertx.mutiny.ext.web.client.WebClient;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The {@link PspPort} for Stripe (docs/stripe.md): form-encoded calls to Stripe's REST API with the Vert.x web client
 * (non-blocking, so that thousands of slow calls need no threads), under the instance's {@link PspConcurrencyLimit},
 * with the pinned {@code Stripe-Version}, our ids as idempotency keys and in {@code metadata}, 429 retried with
 * exponential backoff and jitter, and a timer {@code psp.calls} per call and outcome. The API key is sent, never
 * logged. A charge is NOT_SENT only when the first connect of its first attempt failed ({@link PspHttp#attempts}); a
 * retry after a 429 that cannot connect leaves it UNKNOWN.
 */
public final class StripePsp implements PspPort {

    static final String METADATA_PAYMENT = "payment_id";
    static final String METADATA_REFUND = "refund_id";

    /** The detail of a charge Stripe refused because its key was used with other parameters. */
    public static final String IDEMPOTENCY_ERROR = "idempotency_error";

    /**
     * Stripe keeps a request's answer under its idempotency key for 24 hours, a 500 included: the time after the
     * first attempt until which a re-send with the same key gets the same answer.
     */
    static final Duration STRIPE_KEY_TTL = Duration.ofHours(24);

    /**
     * The detail of a charge or refund whose amount Stripe cannot represent ({@link StripeCurrencies}): nothing is
     * sent. payments-api refuses such amounts before it stores them, so only a request stored before that check gets
     * here; it may have been sent then in other units, so it is left to an operator, never declined.
     */
    public static final String AMOUNT_NOT_REPRESENTABLE = "amount_not_representable";

    /** The {@link ChargeResult#detail()} prefix of a 5xx Stripe replayed under our key ({@code Idempotent-Replayed}). */
    static final String REPLAYED = "replayed_";

    /**
     * An HTTP answer: status, JSON body (a missing node when the body is not JSON) and whether Stripe replayed it
     * under the idempotency key ({@code Idempotent-Replayed: true}).
     */
    record Answer(int status, JsonNode body, boolean replayed) {
        JsonNode error() {
            return body.path("error");
        }
    }

    /** A 429 to retry with backoff; once the retries are used up its answer is the result. */
    private static final class RateLimited extends RuntimeException {
        final Answer answer;

        RateLimited(Answer answer) {
            super("429", null, false, false);
            this.answer = answer;
        }
    }

    private final StripeSettings settings;
    private final WebClient client;
    private final PspConcurrencyLimit limit;
    private final PspCallMetrics metrics;
    private final Clock clock;
    private final StripeSignature signature;
    private final ObjectMapper mapper = new ObjectMapper();
    private final String base;
    private final String authorization;

    /**
     * @param limit the instance's limit of concurrent PSP calls (payments-api and refunds-worker have one each)
     * @param clock our clock: webhook tolerance, the idempotency window and the search lag
     */
    public StripePsp(
            Vertx vertx, StripeSettings settings, PspConcurrencyLimit limit, MeterRegistry registry, Clock clock) {
        this.settings = settings;
        this.limit = limit;
        this.metrics = new PspCallMetrics(registry, "stripe");
        this.clock = clock;
        this.signature = new StripeSignature(settings.webhookSecrets(), settings.webhookTolerance(), clock);
        this.base = PspHttp.base(settings.apiBase());
        this.authorization = "Bearer " + settings.apiKey();
        this.client = PspHttp.client(vertx, settings.maxConnections(), null);
    }

    @Override
    public String provider() {
        return "stripe";
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public AmountRefusal refusal(long amount, String currency) {
        return StripeCurrencies.refusal(amount, currency);
    }

    // ---------------------------------------------------------------- charges

    @Override
    public Uni<ChargeResult> charge(ChargeRequest request) {
        return timed("charge", chargeCall(request, false), ChargeResult::status);
    }

    /** The charge's PaymentIntent with {@code capture_method=manual}: {@code requires_capture} is AUTHORIZED. */
    @Override
    public Uni<ChargeResult> authorize(ChargeRequest request) {
        return timed("authorize", chargeCall(request, true), ChargeResult::status);
    }

    private Uni<ChargeResult> chargeCall(ChargeRequest request, boolean manual) {
        String form;
        try {
            form = chargeForm(request, manual);
        } catch (ArithmeticException e) {
            return Uni.createFrom().item(ChargeResult.attention(null, AMOUNT_NOT_REPRESENTABLE));
        }
        return call(HttpMethod.POST, "/v1/payment_intents", form, request.paymentId())
                .map(StripePsp::chargeOutcome)
                .onFailure(NeverSentException.class)
                .recoverWithItem(ChargeResult::notSent)
                .onFailure(StripePsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(null, detail(failure)));
    }

    /**
     * {@code POST /v1/payment_intents/{id}/capture} with {@code amount_to_capture} (Stripe's units) and the key {@link
     * PspPort#captureKey}: CAPTURED with the amount received; refusals as {@link #settleOutcome}.
     */
    @Override
    public Uni<ChargeResult> capture(CaptureRequest request) {
        String form;
        try {
            form = new Form()
                    .add(
                            "amount_to_capture",
                            Long.toString(StripeCurrencies.toStripe(request.amount(), request.currency())))
                    .toString();
        } catch (ArithmeticException e) {
            return Uni.createFrom().item(ChargeResult.attention(request.pspChargeId(), AMOUNT_NOT_REPRESENTABLE));
        }
        String path = "/v1/payment_intents/" + encode(request.pspChargeId()) + "/capture";
        return timed(
                "capture", settleCall(path, form, PspPort.captureKey(request.paymentId()), true), ChargeResult::status);
    }

    /** {@code POST /v1/payment_intents/{id}/cancel} with the key {@link PspPort#voidKey}: CANCELED once canceled. */
    @Override
    public Uni<ChargeResult> voidAuthorization(VoidRequest request) {
        String path = "/v1/payment_intents/" + encode(request.pspChargeId()) + "/cancel";
        return timed("void", settleCall(path, "", PspPort.voidKey(request.paymentId()), false), ChargeResult::status);
    }

    private Uni<ChargeResult> settleCall(String path, String form, String key, boolean capture) {
        return call(HttpMethod.POST, path, form, key)
                .map(answer -> settleOutcome(answer, capture))
                .onFailure(NeverSentException.class)
                .recoverWithItem(ChargeResult::notSent)
                .onFailure(StripePsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(null, detail(failure)));
    }

    /**
     * What a capture's or a cancel's answer means. 200: the PaymentIntent now ({@link #intentOutcome}). 400 {@code
     * payment_intent_unexpected_state}: by the PaymentIntent in the error: canceled is, for a capture, DECLINED {@link
     * ChargeResult#AUTHORIZATION_EXPIRED} or {@link ChargeResult#AUTHORIZATION_CANCELED}, for a cancel CANCELED (the
     * hold is gone either way); succeeded DECLINED {@link ChargeResult#ALREADY_CAPTURED}; any other state, or a
     * PaymentIntent captured automatically, DECLINED {@link ChargeResult#NOT_AUTHORIZED}. 400 {@code
     * amount_too_large}: DECLINED {@link ChargeResult#AMOUNT_EXCEEDS_AUTHORIZED}. The rest as a charge's answer ({@link #chargeOutcome}).
     */
    static ChargeResult settleOutcome(Answer answer, boolean capture) {
        JsonNode error = answer.error();
        String code = text(error.path("code"));
        if (answer.status() == 400 && "amount_too_large".equals(code)) {
            return ChargeResult.declined(null, ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED);
        }
        if (answer.status() == 400 && "payment_intent_unexpected_state".equals(code)) {
            JsonNode intent = error.path("payment_intent");
            if (!intent.isObject()) {
                return ChargeResult.declined(null, code);
            }
            ChargeResult now = intentOutcome(intent);
            if (!"manual".equals(text(intent.path("capture_method")))) {
                return ChargeResult.declined(now.pspChargeId(), ChargeResult.NOT_AUTHORIZED);
            }
            return switch (now.status()) {
                case CANCELED ->
                    capture
                            ? ChargeResult.declined(
                                            now.pspChargeId(),
                                            ChargeResult.EXPIRED.equals(now.detail())
                                                    ? ChargeResult.AUTHORIZATION_EXPIRED
                                                    : ChargeResult.AUTHORIZATION_CANCELED)
                                    .withMoney(now.amount(), now.currency())
                            : now;
                case CAPTURED ->
                    ChargeResult.declined(now.pspChargeId(), ChargeResult.ALREADY_CAPTURED)
                            .withMoney(now.amount(), now.currency());
                default -> ChargeResult.declined(now.pspChargeId(), ChargeResult.NOT_AUTHORIZED);
            };
        }
        ChargeResult result = chargeOutcome(answer);
        if (!capture && result.status() == ChargeResult.Status.CAPTURED) {
            return ChargeResult.unknown(result.pspChargeId(), "cancel answered succeeded");
        }
        return result;
    }

    /**
     * A PaymentIntent created and confirmed at once, captured automatically (or held: {@code manual}), cards only (no
     * redirect methods, so no {@code return_url}); {@code pm_…} goes as {@code payment_method}, a card token {@code tok_…} as {@code
     * payment_method_data[card][token]}. The amount in Stripe's units ({@link StripeCurrencies}).
     *
     * @throws ArithmeticException when Stripe cannot represent the amount
     */
    static String chargeForm(ChargeRequest request, boolean manual) {
        Form form = new Form()
                .add("amount", Long.toString(StripeCurrencies.toStripe(request.amount(), request.currency())))
                .add("currency", request.currency().toLowerCase(Locale.ROOT))
                .add("confirm", "true")
                .add("capture_method", manual ? "manual" : "automatic")
                .add("payment_method_types[]", "card")
                .add("metadata[" + METADATA_PAYMENT + "]", request.paymentId());
        String source = request.source();
        if (source != null && source.startsWith("tok_")) {
            form.add("payment_method_data[type]", "card").add("payment_method_data[card][token]", source);
        } else {
            form.add("payment_method", source);
        }
        return form.toString();
    }

    /** The outcome table of docs/stripe.md. */
    static ChargeResult chargeOutcome(Answer answer) {
        JsonNode error = answer.error();
        return switch (answer.status()) {
            case 200 -> intentOutcome(answer.body());
            case 402 ->
                ChargeResult.declined(
                        text(error.path("payment_intent").path("id")),
                        first(text(error.path("decline_code")), text(error.path("code")), "card_declined"));
            case 400 ->
                "idempotency_error".equals(text(error.path("type")))
                        ? ChargeResult.attention(null, IDEMPOTENCY_ERROR)
                        : ChargeResult.declined(null, first(text(error.path("code")), "invalid_request", null));
            case 409 -> ChargeResult.unknown(null, first(text(error.path("code")), "conflict", null));
            case 401, 403, 404 -> ChargeResult.attention(null, "http_" + answer.status());
            default -> ChargeResult.unknown(null, replayedServerError(answer) + "http_" + answer.status());
        };
    }

    /** {@link #REPLAYED} for a 5xx Stripe replayed under the key, else empty. */
    private static String replayedServerError(Answer answer) {
        return answer.replayed() && answer.status() >= 500 ? REPLAYED : "";
    }

    /**
     * A PaymentIntent's status as our outcome, its amount in ISO minor units. An amount that has no exact value in
     * them cannot be ours: UNKNOWN with {@code needsAttention}, never settled. Of a {@code capture_method=manual}
     * PaymentIntent: {@code requires_capture} is AUTHORIZED, {@code succeeded} CAPTURED with {@code amount_received}
     * (the captured amount), {@code canceled} CANCELED ({@code cancellation_reason} {@code automatic} or {@code
     * expired}: {@link ChargeResult#EXPIRED}, else {@link ChargeResult#VOIDED}); an automatic one's {@code canceled}
     * stays DECLINED.
     */
    static ChargeResult intentOutcome(JsonNode intent) {
        String id = text(intent.path("id"));
        String status = text(intent.path("status"));
        if (id == null || status == null) {
            return ChargeResult.unknown(id, "not_a_payment_intent");
        }
        JsonNode lastError = intent.path("last_payment_error");
        boolean manual = "manual".equals(text(intent.path("capture_method")));
        JsonNode amount = intent.path(manual && "succeeded".equals(status) ? "amount_received" : "amount");
        String currency = text(intent.path("currency"));
        String reason = text(intent.path("cancellation_reason"));
        ChargeResult result =
                switch (status) {
                    case "succeeded" -> ChargeResult.captured(id);
                    case "requires_capture" -> ChargeResult.authorized(id);
                    case "canceled" ->
                        manual
                                ? ChargeResult.canceled(
                                        id,
                                        "automatic".equals(reason) || "expired".equals(reason)
                                                ? ChargeResult.EXPIRED
                                                : ChargeResult.VOIDED)
                                : ChargeResult.declined(id, "canceled");
                    case "requires_payment_method" ->
                        lastError.isObject()
                                ? ChargeResult.declined(
                                        id,
                                        first(
                                                text(lastError.path("decline_code")),
                                                text(lastError.path("code")),
                                                "card_declined"))
                                : ChargeResult.unknown(id, status);
                    default ->
                        ChargeResult.unknown(id, status); // requires_action, processing, requires_confirmation, …
                };
        String iso = currency == null ? null : currency.toUpperCase(Locale.ROOT);
        if (!amount.canConvertToLong() || !amount.isIntegralNumber() || iso == null) {
            return result.withMoney(null, iso);
        }
        try {
            return result.withMoney(StripeCurrencies.toIso(amount.asLong(), iso), iso);
        } catch (ArithmeticException e) {
            return ChargeResult.attention(id, AMOUNT_NOT_REPRESENTABLE).withMoney(null, iso);
        }
    }

    /**
     * Inside Stripe's key window the same request is sent again with the same key: Stripe replays the first answer,
     * or runs it now if the first never arrived. Should Stripe refuse the key as used with other parameters (400
     * {@code idempotency_error}: a PaymentIntent exists under our payment id, but not the one we asked for), the
     * PaymentIntent is searched by our metadata, so that the resolver sees what Stripe holds (and its amount);
     * not found there, the answer stays UNKNOWN with {@code needsAttention}. Should Stripe replay a 5xx under the key
     * (the first attempt's answer, kept for 24 hours: every re-send gets it), the PaymentIntent is retrieved by its
     * stored id, else searched by our metadata; found captured or declined, that is the answer, else UNKNOWN with
     * {@code needsAttention} ({@link #replayed5xx}) and nothing new is sent: a new key could charge twice. After the
     * window, the PaymentIntent is
     * retrieved by its stored id, else searched by {@code metadata['payment_id']}; the search index lags, so an empty
     * search means NOT_FOUND only once {@link StripeSettings#searchLag()} has passed since the first attempt. An
     * authorization ({@link ChargeQuery#authorization()}) whose PaymentIntent id we know is always retrieved: its
     * capture or cancel shows only there; one whose id we never learnt is re-sent as an authorization as above.
     */
    @Override
    public Uni<ChargeResult> lookUpCharge(ChargeQuery query) {
        Instant now = clock.instant();
        if (query.authorization() && query.pspChargeId() != null) {
            // a re-send would replay the authorization's first answer; its capture or void is only in the intent now
            return retrieve(query.pspChargeId());
        }
        if (now.isBefore(query.firstSentAt().plus(settings.idempotencyWindow()))) {
            return timed("charge_resend", chargeCall(query.original(), query.authorization()), ChargeResult::status)
                    .flatMap(result -> {
                        if (result.neverSent()) {
                            // this re-send reached nothing; it says nothing of the charge the first one made
                            return Uni.createFrom().item(ChargeResult.unknown(null, ChargeResult.CONNECT_FAILED));
                        }
                        if (result.needsAttention() && IDEMPOTENCY_ERROR.equals(result.detail())) {
                            return search(query, false).map(found -> definite(found) ? found : result);
                        }
                        if (result.detail() != null && result.detail().startsWith(REPLAYED)) {
                            Uni<ChargeResult> found =
                                    query.pspChargeId() != null ? retrieve(query.pspChargeId()) : search(query, false);
                            return found.map(intent -> definite(intent) ? intent : replayed5xx(query, intent, result));
                        }
                        return Uni.createFrom().item(result);
                    });
        }
        if (query.pspChargeId() != null) {
            return retrieve(query.pspChargeId());
        }
        return search(query, !now.isBefore(query.firstSentAt().plus(settings.searchLag())));
    }

    private static boolean definite(ChargeResult result) {
        return switch (result.status()) {
            case CAPTURED, DECLINED, AUTHORIZED, CANCELED -> true;
            default -> false;
        };
    }

    /**
     * Stripe replays a 5xx under our key and no captured or declined PaymentIntent is found: it may never have been
     * created, and a new key could charge twice, so the payment waits for the key to expire (the resolver's look-up
     * after {@link StripeSettings#idempotencyWindow()}) and an operator is told at once.
     */
    private static ChargeResult replayed5xx(ChargeQuery query, ChargeResult found, ChargeResult resent) {
        String status = resent.detail().substring(REPLAYED.length() + "http_".length());
        return ChargeResult.attention(
                found.pspChargeId() != null ? found.pspChargeId() : query.pspChargeId(),
                "the PSP replays a " + status + " under the key until "
                        + query.firstSentAt().plus(STRIPE_KEY_TTL));
    }

    /** The PaymentIntent of a stored id. */
    private Uni<ChargeResult> retrieve(String pspChargeId) {
        Uni<ChargeResult> retrieved = call(HttpMethod.GET, "/v1/payment_intents/" + encode(pspChargeId))
                .map(answer -> answer.status() == 200
                        ? intentOutcome(answer.body())
                        : answer.status() == 404
                                ? ChargeResult.attention(pspChargeId, "payment_intent_missing")
                                : ChargeResult.unknown(pspChargeId, "http_" + answer.status()))
                .onFailure(StripePsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(pspChargeId, detail(failure)));
        return timed("charge_retrieve", retrieved, ChargeResult::status);
    }

    /**
     * The PaymentIntents whose {@code metadata['payment_id']} is ours (a captured one first); none is NOT_FOUND when
     * {@code lagOver}, else UNKNOWN {@code search_lag}.
     */
    private Uni<ChargeResult> search(ChargeQuery query, boolean lagOver) {
        String paymentId = query.original().paymentId();
        String search = "query="
                + encode("metadata['" + METADATA_PAYMENT + "']:'" + paymentId.replace("'", "\\'") + "'") + "&limit=10";
        Uni<ChargeResult> found = call(HttpMethod.GET, "/v1/payment_intents/search?" + search)
                .map(answer -> {
                    if (answer.status() != 200) {
                        return ChargeResult.unknown(null, "http_" + answer.status());
                    }
                    JsonNode data = answer.body().path("data");
                    if (!data.isArray() || data.isEmpty()) {
                        return lagOver ? ChargeResult.notFound() : ChargeResult.unknown(null, "search_lag");
                    }
                    ChargeResult best = null;
                    for (JsonNode intent : data) {
                        ChargeResult result = intentOutcome(intent);
                        if (best == null || result.status() == ChargeResult.Status.CAPTURED) {
                            best = result;
                        }
                    }
                    return best;
                })
                .onFailure(StripePsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(null, detail(failure)));
        return timed("charge_search", found, ChargeResult::status);
    }

    // ---------------------------------------------------------------- refunds

    @Override
    public Uni<RefundResult> refund(RefundRequest request) {
        return timed("refund", refundCall(request), RefundResult::status);
    }

    private Uni<RefundResult> refundCall(RefundRequest request) {
        long amount;
        try {
            amount = StripeCurrencies.toStripe(request.amount(), request.currency());
        } catch (ArithmeticException e) {
            return Uni.createFrom().item(RefundResult.attention(null, AMOUNT_NOT_REPRESENTABLE));
        }
        String form = new Form()
                .add("payment_intent", request.pspChargeId())
                .add("amount", Long.toString(amount))
                .add("metadata[" + METADATA_REFUND + "]", request.refundId())
                .add("metadata[" + METADATA_PAYMENT + "]", request.paymentId())
                .toString();
        return call(HttpMethod.POST, "/v1/refunds", form, request.refundId())
                .flatMap(answer -> replayedServerError(answer).isEmpty()
                        ? Uni.createFrom().item(refundOutcome(answer))
                        : listed(request).map(found -> replayed5xx(answer, found)))
                .onFailure(StripePsp::sent)
                .recoverWithItem(failure -> RefundResult.unknown(null, detail(failure)));
    }

    /**
     * Stripe replays a 5xx under the refund's key (the first attempt's answer, kept 24 hours): the refund as the
     * PaymentIntent's refund list shows it; not there (or the list unanswered), UNKNOWN with {@code needsAttention}
     * and nothing new is sent: a new key could refund twice.
     */
    private static RefundResult replayed5xx(Answer answer, RefundResult found) {
        return switch (found.status()) {
            case SUCCEEDED, PENDING, FAILED -> found;
            default ->
                RefundResult.attention(
                        null,
                        "the PSP replays a " + answer.status() + " under the key until " + STRIPE_KEY_TTL.toHours()
                                + " h after the refund's first attempt");
        };
    }

    static RefundResult refundOutcome(Answer answer) {
        JsonNode error = answer.error();
        return switch (answer.status()) {
            case 200 -> refundStatus(answer.body());
            case 400 ->
                "idempotency_error".equals(text(error.path("type")))
                        ? RefundResult.attention(null, "idempotency_error")
                        : RefundResult.of(
                                RefundResult.Status.FAILED,
                                null,
                                first(text(error.path("code")), "invalid_request", null));
            case 409 -> RefundResult.unknown(null, first(text(error.path("code")), "conflict", null));
            case 401, 403, 404 -> RefundResult.attention(null, "http_" + answer.status());
            default -> RefundResult.unknown(null, "http_" + answer.status());
        };
    }

    /** Stripe's refund statuses: succeeded, pending (and requires_action), failed, canceled. */
    static RefundResult refundStatus(JsonNode refund) {
        String id = text(refund.path("id"));
        String status = text(refund.path("status"));
        if (id == null || status == null) {
            return RefundResult.unknown(id, "not_a_refund");
        }
        return switch (status) {
            case "succeeded" -> RefundResult.of(RefundResult.Status.SUCCEEDED, id, null);
            case "pending", "requires_action" -> RefundResult.of(RefundResult.Status.PENDING, id, null);
            case "failed", "canceled" ->
                RefundResult.of(
                        RefundResult.Status.FAILED, id, first(text(refund.path("failure_reason")), status, null));
            default -> RefundResult.unknown(id, status);
        };
    }

    /**
     * Inside the key window the refund is sent again with the same key; after it, retrieved by its stored id, else
     * found in the PaymentIntent's refund list (a list, not search: it has no lag, so absence there is NOT_FOUND).
     */
    @Override
    public Uni<RefundResult> lookUpRefund(RefundQuery query) {
        Instant now = clock.instant();
        if (now.isBefore(query.firstSentAt().plus(settings.idempotencyWindow()))) {
            return timed("refund_resend", refundCall(query.original()), RefundResult::status);
        }
        Uni<RefundResult> lookup;
        if (query.pspRefundId() != null) {
            lookup = call(HttpMethod.GET, "/v1/refunds/" + encode(query.pspRefundId()))
                    .map(answer -> answer.status() == 200
                            ? refundStatus(answer.body())
                            : RefundResult.unknown(query.pspRefundId(), "http_" + answer.status()));
        } else {
            lookup = listed(query.original());
        }
        return timed(
                "refund_lookup",
                lookup.onFailure(StripePsp::sent)
                        .recoverWithItem(failure -> RefundResult.unknown(query.pspRefundId(), detail(failure))),
                RefundResult::status);
    }

    /**
     * Our refund in the PaymentIntent's refund list, found by {@code metadata['refund_id']} (a list, not search: no
     * lag), read page by page ({@code starting_after} the last id of a page, while {@code has_more}): a PaymentIntent
     * may have more refunds than one page holds, and only a list read to its end makes absence NOT_FOUND (on which
     * the refund is sent again).
     */
    private Uni<RefundResult> listed(RefundRequest original) {
        return listedAfter(original, null);
    }

    private Uni<RefundResult> listedAfter(RefundRequest original, String after) {
        String refundId = original.refundId();
        String path = "/v1/refunds?limit=100&payment_intent=" + encode(original.pspChargeId())
                + (after == null ? "" : "&starting_after=" + encode(after));
        return call(HttpMethod.GET, path).flatMap(answer -> {
            if (answer.status() != 200) {
                return Uni.createFrom().item(RefundResult.unknown(null, "http_" + answer.status()));
            }
            JsonNode data = answer.body().path("data");
            if (!data.isArray()) {
                return Uni.createFrom().item(RefundResult.unknown(null, "not_a_list"));
            }
            String last = null;
            for (JsonNode refund : data) {
                if (refundId.equals(text(refund.path("metadata").path(METADATA_REFUND)))) {
                    return Uni.createFrom().item(refundStatus(refund));
                }
                last = text(refund.path("id"));
            }
            if (!answer.body().path("has_more").asBoolean(false)) {
                return Uni.createFrom().item(new RefundResult(RefundResult.Status.NOT_FOUND, null, null, null, false));
            }
            if (last == null || last.equals(after)) {
                // more announced but no way on: the list was not read to its end, so absence proves nothing
                return Uni.createFrom().item(RefundResult.unknown(null, "refund_list_incomplete"));
            }
            return listedAfter(original, last);
        });
    }

    // ---------------------------------------------------------------- webhooks

    @Override
    public PspEvent verifyWebhook(byte[] body, Function<String, String> header) {
        signature.verify(header.apply("Stripe-Signature"), body);
        JsonNode event;
        try {
            event = mapper.readTree(body);
        } catch (IOException e) {
            throw new WebhookRejectedException(WebhookRejectedException.Reason.NOT_AN_EVENT, "the body is not JSON");
        }
        return StripeMapping.parse(event);
    }

    // ---------------------------------------------------------------- settlement

    /** The balance transactions created on {@code day} (UTC), newest first. */
    @Override
    public Multi<SettlementLine> settlementLines(LocalDate day) {
        long from = day.atStartOfDay(ZoneOffset.UTC).toEpochSecond();
        long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toEpochSecond();
        return balanceTransactions("created%5Bgte%5D=" + from + "&created%5Blt%5D=" + to);
    }

    /** The balance transactions of one payout ({@code po_…}), newest first. */
    public Multi<SettlementLine> payoutLines(String payoutId) {
        return balanceTransactions("payout=" + encode(payoutId));
    }

    /** Pages of 100 with {@code starting_after}, each line with its source and the source's PaymentIntent expanded. */
    private Multi<SettlementLine> balanceTransactions(String filter) {
        String query = "/v1/balance_transactions?limit=100&expand%5B%5D=data.source.payment_intent&" + filter;
        record Page(List<SettlementLine> lines, String next) {}
        Page end = new Page(List.of(), null);
        class Cursor {
            String after;
            boolean done;
        }
        return Multi.createBy()
                .repeating()
                .uni(Cursor::new, cursor -> {
                    if (cursor.done) {
                        return Uni.createFrom().item(end);
                    }
                    String path = cursor.after == null ? query : query + "&starting_after=" + encode(cursor.after);
                    return call(HttpMethod.GET, path).map(answer -> {
                        if (answer.status() != 200) {
                            throw new IllegalStateException(
                                    "Stripe balance transactions answered HTTP " + answer.status());
                        }
                        List<SettlementLine> lines = new ArrayList<>();
                        String last = null;
                        for (JsonNode txn : answer.body().path("data")) {
                            last = text(txn.path("id"));
                            SettlementLine line = StripeMapping.settlementLine(txn);
                            if (line != null) {
                                lines.add(line);
                            }
                        }
                        cursor.done = !answer.body().path("has_more").asBoolean(false) || last == null;
                        cursor.after = last;
                        return new Page(lines, last);
                    });
                })
                .until(page -> page == end)
                .onItem()
                .transformToIterable(Page::lines);
    }

    // ---------------------------------------------------------------- HTTP

    private Uni<Answer> call(HttpMethod method, String path) {
        return call(method, path, null, null);
    }

    /**
     * One Stripe call under the concurrency limit, a 429 retried with backoff and jitter (with the same key, which
     * Stripe does not keep for a 429), the whole bounded by {@link StripeSettings#callTimeout()} per attempt.
     */
    private Uni<Answer> call(HttpMethod method, String path, String form, String idempotencyKey) {
        long timeoutMs = settings.callTimeout().toMillis();
        Uni<Answer> attempt = PspHttp.attempts(() -> {
                    HttpRequest<Buffer> request = client.requestAbs(method, base + path)
                            .putHeader("Authorization", authorization)
                            .putHeader("Stripe-Version", settings.apiVersion())
                            .timeout(timeoutMs);
                    if (idempotencyKey != null) {
                        request.putHeader("Idempotency-Key", idempotencyKey);
                    }
                    return form == null
                            ? request.send()
                            : request.putHeader("Content-Type", "application/x-www-form-urlencoded")
                                    .sendBuffer(Buffer.buffer(form));
                })
                .ifNoItem()
                .after(settings.callTimeout())
                .failWith(() -> new TimeoutException("Stripe did not answer within " + timeoutMs + " ms"))
                .map(response -> {
                    Answer answer = new Answer(
                            response.statusCode(),
                            PspHttp.json(response.bodyAsBuffer(), mapper.missingNode()),
                            "true".equalsIgnoreCase(response.getHeader("Idempotent-Replayed")));
                    if (answer.status() == 429) {
                        throw new RateLimited(answer);
                    }
                    return answer;
                });
        Uni<Answer> retried = settings.rateLimitRetries() <= 0
                ? attempt
                : attempt.onFailure(RateLimited.class)
                        .retry()
                        .withBackOff(settings.rateLimitBackoff(), settings.callTimeout())
                        .withJitter(0.2)
                        .atMost(settings.rateLimitRetries());
        Uni<Answer> answered =
                retried.onFailure(RateLimited.class).recoverWithItem(failure -> ((RateLimited) failure).answer);
        return limit == null ? answered : limit.run(() -> answered);
    }

    private <T> Uni<T> timed(String call, Uni<T> uni, Function<T, Enum<?>> outcome) {
        return metrics.timed(call, uni, outcome);
    }

    /** Every failure but a saturated limit (nothing sent) leaves the outcome unknown. */
    private static boolean sent(Throwable failure) {
        return !(failure instanceof PspSaturatedException);
    }

    private static String detail(Throwable failure) {
        if (failure instanceof NeverSentException) {
            return ChargeResult.CONNECT_FAILED;
        }
        if (PspHttp.connectFailed(failure)) {
            return "retry_connect_failed";
        }
        if (failure instanceof TimeoutException
                || failure instanceof io.vertx.core.http.HttpClosedException
                || failure.getClass().getSimpleName().contains("Timeout")) {
            return "timeout";
        }
        return "io_error";
    }

    private static String first(String a, String b, String c) {
        return a != null ? a : b != null ? b : c;
    }

    /** {@code application/x-www-form-urlencoded}, Stripe's request format; null values are left out. */
    static final class Form {
        private final StringBuilder text = new StringBuilder();

        Form add(String name, String value) {
            if (value == null) {
                return this;
            }
            if (!text.isEmpty()) {
                text.append('&');
            }
            text.append(encode(name)).append('=').append(encode(value));
            return this;
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
