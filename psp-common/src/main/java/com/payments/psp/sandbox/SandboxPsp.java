package com.payments.psp.sandbox;

import static com.payments.psp.PspHttp.encode;
import static com.payments.psp.PspHttp.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.payments.psp.NeverSentException;
import com.payments.psp.PspCallMetrics;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspHttp;
import com.payments.psp.PspSaturatedException;
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
import com.payments.psp.settlement.LineSplitter;
import com.payments.psp.settlement.SandboxSettlementFile;
import com.payments.psp.settlement.SettlementFormatException;
import com.payments.psp.stripe.StripeSignature;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.core.http.HttpClient;
import io.vertx.mutiny.core.http.HttpClientRequest;
import io.vertx.mutiny.ext.web.client.HttpRequest;
import io.vertx.mutiny.ext.web.client.HttpResponse;
import io.vertx.mutiny.ext.web.client.WebClient;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The {@link PspPort} for the project's own PSP protocol (docs/architecture.md §5), which psp-sandbox serves: JSON
 * over HTTP with the Vert.x web client (non-blocking: a call in flight costs a connection, not a thread), our payment
 * or refund id as both {@code Idempotency-Key} and {@code reference}. A call whose connection closed before any answer
 * (typically a kept-alive connection the PSP closed as the request went out) is sent once more at once with the same
 * key: the PSP answers a repeated key with its first result, so this never charges twice. A charge is NOT_SENT only when
 * the first connect of its first attempt failed ({@link PspHttp#attempts}); a resend that cannot connect leaves it
 * UNKNOWN, since the first attempt may have charged.
 *
 * <p>Authorizations: {@code POST /v1/authorizations} (the charge's body and key), {@code POST
 * /v1/charges/{id}/capture} and {@code /void} with the keys {@link PspPort#captureKey} and {@link PspPort#voidKey};
 * {@code GET /v1/charges?reference=} tells an authorization's state now (docs/psp-sandbox.md).
 *
 * <p>When built with a {@link PspConcurrencyLimit} every call runs under it; the services pass none and take their
 * permit themselves, outside their circuit breakers (so that a shed call never counts as a PSP failure).
 */
public final class SandboxPsp implements PspPort {

    /** PSP error codes of a refund refused for good without moving money: a decline, not a rejection. */
    private static final Set<String> REFUND_DECLINE_CODES =
            Set.of("amount_exceeds_refundable", "charge_not_refundable");

    /** The PSP's refusals of a capture or void (422, nothing moved) as our stable decline codes. */
    private static final Map<String, String> SETTLE_REFUSALS = Map.of(
            "authorization_canceled", ChargeResult.AUTHORIZATION_CANCELED,
            "authorization_expired", ChargeResult.AUTHORIZATION_EXPIRED,
            "amount_exceeds_authorized", ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED,
            "charge_already_captured", ChargeResult.ALREADY_CAPTURED,
            "charge_not_authorized", ChargeResult.NOT_AUTHORIZED);

    /** An HTTP answer: status and JSON body (missing when empty, null when it is not JSON). */
    record Answer(int status, JsonNode body) {
        String errorCode() {
            return body == null ? null : text(body.path("error").path("code"));
        }

        String field(String name) {
            return body == null ? null : text(body.path(name));
        }
    }

    private final SandboxSettings settings;
    private final WebClient client;
    private final PspConcurrencyLimit limit;
    private final StripeSignature signature;
    private final PspCallMetrics metrics;
    private final ObjectMapper mapper = new ObjectMapper();
    private final String base;
    /** Streams the settlement files (the web client reads a body whole). */
    private final HttpClient files;

    /**
     * @param limit the instance's limit of concurrent PSP calls, or null when the caller takes the permits
     * @param registry where the timer {@code psp.calls} goes ({@link PspCallMetrics}); null for none
     * @param clock our clock, for the webhooks' timestamp tolerance
     */
    public SandboxPsp(
            Vertx vertx, SandboxSettings settings, PspConcurrencyLimit limit, MeterRegistry registry, Clock clock) {
        this.settings = settings;
        this.metrics = new PspCallMetrics(registry, "sandbox");
        this.limit = limit;
        this.signature = new StripeSignature(settings.webhookSecrets(), settings.webhookTolerance(), clock);
        this.base = PspHttp.base(settings.url());
        this.client = PspHttp.client(vertx, settings.maxConnections(), settings.connectTimeout());
        this.files =
                vertx.createHttpClient(new HttpClientOptions().setMaxPoolSize(1).setConnectTimeout((int)
                        settings.connectTimeout().toMillis()));
    }

    @Override
    public String provider() {
        return "sandbox";
    }

    @Override
    public void close() {
        client.close();
        files.closeAndForget();
    }

    // ---------------------------------------------------------------- charges

    @Override
    public Uni<ChargeResult> charge(ChargeRequest request) {
        return metrics.timed(
                "charge",
                sent(post("/v1/charges", request.paymentId(), chargeBody(request)), SandboxPsp::chargeOutcome),
                ChargeResult::status);
    }

    /** {@code POST /v1/authorizations}: the charge's body; the money is held until captured, voided or expired. */
    @Override
    public Uni<ChargeResult> authorize(ChargeRequest request) {
        return metrics.timed(
                "authorize",
                sent(post("/v1/authorizations", request.paymentId(), chargeBody(request)), SandboxPsp::chargeOutcome),
                ChargeResult::status);
    }

    /** {@code POST /v1/charges/{id}/capture} {@code {"amount"}} with the key {@link PspPort#captureKey}. */
    @Override
    public Uni<ChargeResult> capture(CaptureRequest request) {
        ObjectNode body = mapper.createObjectNode().put("amount", request.amount());
        String path = "/v1/charges/" + encode(request.pspChargeId()) + "/capture";
        return metrics.timed(
                "capture",
                sent(post(path, PspPort.captureKey(request.paymentId()), body), SandboxPsp::settleOutcome),
                ChargeResult::status);
    }

    /** {@code POST /v1/charges/{id}/void} with the key {@link PspPort#voidKey}. */
    @Override
    public Uni<ChargeResult> voidAuthorization(VoidRequest request) {
        String path = "/v1/charges/" + encode(request.pspChargeId()) + "/void";
        return metrics.timed(
                "void",
                sent(post(path, PspPort.voidKey(request.paymentId()), mapper.createObjectNode()), answer -> {
                    ChargeResult result = settleOutcome(answer);
                    return result.status() == ChargeResult.Status.CAPTURED
                            ? ChargeResult.unknown(result.pspChargeId(), "void answered captured")
                            : result;
                }),
                ChargeResult::status);
    }

    private ObjectNode chargeBody(ChargeRequest request) {
        return mapper.createObjectNode()
                .put("reference", request.paymentId())
                .put("amount", request.amount())
                .put("currency", request.currency())
                .put("source", request.source());
    }

    /** A POST's answer as a result: NOT_SENT only when its first connect failed, every other failure UNKNOWN. */
    private static Uni<ChargeResult> sent(Uni<Answer> call, Function<Answer, ChargeResult> outcome) {
        return call.map(outcome)
                .onFailure(NeverSentException.class)
                .recoverWithItem(ChargeResult::notSent)
                .onFailure(SandboxPsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(null, detail(failure)));
    }

    /**
     * What a capture or void answer means: 200 the authorization as it is now ({@link #chargeOutcome}); a 422 refusal
     * a decline with our stable code (nothing moved); a 404 (no such charge) or a 422 {@code idempotency_*} (the key
     * holds another request) UNKNOWN with {@code needsAttention}: only an operator can tell; another 4xx but 408, 409
     * and 429 a decline; the rest UNKNOWN.
     */
    static ChargeResult settleOutcome(Answer answer) {
        int status = answer.status();
        if (status == 200) {
            return chargeOutcome(answer);
        }
        String code = answer.errorCode();
        if (status == 422 && code != null && SETTLE_REFUSALS.containsKey(code)) {
            return ChargeResult.declined(null, SETTLE_REFUSALS.get(code));
        }
        if (status == 404 || (status == 422 && code != null && code.startsWith("idempotency"))) {
            return ChargeResult.attention(null, "http_" + status + " " + code);
        }
        if (status >= 400 && status < 500 && status != 408 && status != 409 && status != 429) {
            return ChargeResult.declined(null, code != null ? code : "psp_rejected_" + status);
        }
        return ChargeResult.unknown(null, "http_" + status);
    }

    /**
     * What a charge answer means. A 409, or a 422 {@code idempotency_*}: the PSP holds a charge under this key (still
     * in flight, or made from another body); it may have moved money, so this is no refusal but UNKNOWN, for the
     * resolver. Any other 4xx but 408 and 429 is a refusal (nothing was charged).
     */
    static ChargeResult chargeOutcome(Answer answer) {
        int status = answer.status();
        String id = answer.field("id");
        String state = answer.field("status");
        if (status == 200 && "succeeded".equals(state) && id != null) {
            return withMoney(ChargeResult.captured(id), answer);
        }
        if (status == 200 && "authorized".equals(state) && id != null) {
            return withMoney(ChargeResult.authorized(id), answer);
        }
        if (status == 200 && "canceled".equals(state) && id != null) {
            String reason =
                    "expired".equals(answer.field("cancellationReason")) ? ChargeResult.EXPIRED : ChargeResult.VOIDED;
            return withMoney(ChargeResult.canceled(id, reason), answer);
        }
        if (status == 200 && "declined".equals(state)) {
            String code = answer.field("declineCode");
            return withMoney(ChargeResult.declined(id, code == null ? "declined" : code), answer);
        }
        String code = answer.errorCode();
        if (status == 409 || (status == 422 && code != null && code.startsWith("idempotency"))) {
            return ChargeResult.unknown(null, "http_" + status + " " + code + ": a charge may exist under this key");
        }
        if (status >= 400 && status < 500 && status != 408 && status != 429) {
            return ChargeResult.declined(null, code != null ? code : "psp_rejected_" + status);
        }
        return ChargeResult.unknown(null, "http_" + status);
    }

    /**
     * The charge's amount and currency where the answer carries them (the resolver compares them with ours); of a
     * captured authorization the captured amount.
     */
    private static ChargeResult withMoney(ChargeResult result, Answer answer) {
        JsonNode captured = answer.body().path("capturedAmount");
        JsonNode amount = result.status() == ChargeResult.Status.CAPTURED && !captured.isMissingNode()
                ? captured
                : answer.body().path("amount");
        return result.withMoney(
                amount.isIntegralNumber() && amount.canConvertToLong() ? amount.asLong() : null,
                answer.field("currency"));
    }

    /**
     * {@code GET /v1/charges?reference=}: the charge as the PSP has it, or NOT_FOUND (404: the PSP never received it;
     * the resolver then sends the same charge again with the same key).
     */
    @Override
    public Uni<ChargeResult> lookUpCharge(ChargeQuery query) {
        Uni<ChargeResult> lookup = get("/v1/charges?reference="
                        + encode(query.original().paymentId()))
                .map(answer -> {
                    if (answer.status() == 404) {
                        return ChargeResult.notFound();
                    }
                    ChargeResult result = chargeOutcome(answer);
                    return answer.status() == 200 ? result : ChargeResult.unknown(null, "http_" + answer.status());
                })
                .onFailure(SandboxPsp::sent)
                .recoverWithItem(failure -> ChargeResult.unknown(null, detail(failure)));
        return metrics.timed("charge_lookup", lookup, ChargeResult::status);
    }

    // ---------------------------------------------------------------- refunds

    @Override
    public Uni<RefundResult> refund(RefundRequest request) {
        ObjectNode body = mapper.createObjectNode()
                .put("reference", request.refundId())
                .put("charge", request.pspChargeId())
                .put("amount", request.amount());
        return metrics.timed(
                "refund", refundResult(post("/v1/refunds", request.refundId(), body), false), RefundResult::status);
    }

    /** {@code GET /v1/refunds?reference=}: the refund as the PSP has it, or NOT_FOUND (404). */
    @Override
    public Uni<RefundResult> lookUpRefund(RefundQuery query) {
        return metrics.timed(
                "refund_lookup",
                refundResult(
                        get("/v1/refunds?reference=" + encode(query.original().refundId())), true),
                RefundResult::status);
    }

    private static Uni<RefundResult> refundResult(Uni<Answer> call, boolean lookup) {
        return call.map(answer -> refundOutcome(answer, lookup))
                .onFailure(SandboxPsp::sent)
                .recoverWithItem(failure -> RefundResult.unknown(null, detail(failure)));
    }

    /**
     * What a refund answer means: succeeded or failed; a 404 of a lookup is NOT_FOUND; a 422 decline code is FAILED
     * (no money moved); another 4xx but 408 and 429 is a rejection of the request itself (bad charge, key reused with
     * another body), which no retry changes: UNKNOWN with {@code needsAttention}, detail {@code HTTP <status> <code>}.
     * 5xx, 408, 429 and answers outside the protocol are UNKNOWN.
     */
    static RefundResult refundOutcome(Answer answer, boolean lookup) {
        int status = answer.status();
        if (answer.body() == null) {
            return RefundResult.unknown(null, "unreadable answer (HTTP " + status + ")");
        }
        if (status == 200) {
            String id = answer.field("id");
            String state = answer.field("status");
            if ("succeeded".equals(state) && id != null) {
                return RefundResult.of(RefundResult.Status.SUCCEEDED, id, null);
            }
            return "failed".equals(state)
                    ? RefundResult.of(RefundResult.Status.FAILED, id, "psp_refund_failed")
                    : RefundResult.unknown(id, "refund answer with status " + state);
        }
        if (status >= 500 || status == 408 || status == 429 || status < 400) {
            return RefundResult.unknown(null, "http_" + status);
        }
        if (lookup && status == 404) {
            return new RefundResult(RefundResult.Status.NOT_FOUND, null, null, null, false);
        }
        String code = answer.errorCode() == null ? "http_" + status : answer.errorCode();
        if (status == 422 && REFUND_DECLINE_CODES.contains(code)) {
            return RefundResult.of(RefundResult.Status.FAILED, null, code);
        }
        return RefundResult.attention(null, "HTTP " + status + " " + code);
    }

    // ---------------------------------------------------------------- webhooks

    /**
     * {@code Psp-Signature} (the same scheme as Stripe's) over the exact bytes; the body
     * {@code {"id","type","data":{…the charge or refund…}}}. Types other than charge.succeeded|failed and
     * refund.succeeded|failed are IGNORED.
     */
    @Override
    public PspEvent verifyWebhook(byte[] body, Function<String, String> header) {
        signature.verify(header.apply("Psp-Signature"), body);
        JsonNode event;
        try {
            event = mapper.readTree(body);
        } catch (IOException e) {
            throw new WebhookRejectedException(WebhookRejectedException.Reason.NOT_AN_EVENT, "the body is not JSON");
        }
        String id = text(event.path("id"));
        String type = text(event.path("type"));
        JsonNode data = event.path("data");
        if (id == null || type == null || !data.isObject()) {
            throw new WebhookRejectedException(WebhookRejectedException.Reason.NOT_AN_EVENT, "not a PSP event");
        }
        PspEvent.Type ours =
                switch (type) {
                    case "charge.succeeded" -> PspEvent.Type.CHARGE_SUCCEEDED;
                    case "charge.failed" -> PspEvent.Type.CHARGE_FAILED;
                    case "refund.succeeded" -> PspEvent.Type.REFUND_SUCCEEDED;
                    case "refund.failed" -> PspEvent.Type.REFUND_FAILED;
                    default -> PspEvent.Type.IGNORED;
                };
        boolean refund = type.startsWith("refund.");
        JsonNode created = event.path("created");
        return new PspEvent(
                id,
                ours,
                created.canConvertToLong() ? Instant.ofEpochSecond(created.asLong()) : null,
                refund ? null : text(data.path("reference")),
                refund ? text(data.path("reference")) : null,
                refund ? text(data.path("charge")) : text(data.path("id")),
                text(data.path("id")),
                data.path("amount").asLong(0),
                text(data.path("currency")),
                text(data.path(refund ? "failureCode" : "declineCode")),
                type);
    }

    // ---------------------------------------------------------------- settlement

    /**
     * {@code GET /v1/settlements/{day}.csv}: the day's file, one {@link SettlementLine} per line after the header,
     * streamed: lines are parsed as the body arrives and the body is read only as fast as the subscriber asks (a day of
     * a million lines never sits in memory). A malformed line fails the stream with a {@link
     * SettlementFormatException} naming its line; an answer other than 200 fails it too. {@code callTimeout} is the
     * longest the body may stall.
     */
    @Override
    public Multi<SettlementLine> settlementLines(LocalDate day) {
        String url = base + "/v1/settlements/" + day + ".csv";
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.GET)
                .setAbsoluteURI(url)
                .putHeader("Accept", "text/csv")
                .setIdleTimeout(settings.callTimeout().toMillis());
        return Multi.createFrom().deferred(() -> {
            LineSplitter splitter = new LineSplitter();
            long[] lineNo = {0};
            return files.request(options)
                    .chain(HttpClientRequest::send)
                    .onItem()
                    .transformToMulti(response -> {
                        if (response.statusCode() != 200) {
                            return response.body().onItem().<Buffer>transformToMulti(body -> Multi.createFrom()
                                    .failure(new IllegalStateException(
                                            "GET " + url + " answered " + response.statusCode())));
                        }
                        return response.toMulti();
                    })
                    .onItem()
                    .transformToIterable(chunk -> splitter.feed(chunk.getBytes()))
                    .onCompletion()
                    .switchTo(() -> Multi.createFrom().iterable(splitter.rest()))
                    .onItem()
                    .transformToIterable(line -> {
                        long n = ++lineNo[0];
                        if (n > 1) {
                            return List.of(SandboxSettlementFile.parseLine(line, n));
                        }
                        if (!SandboxSettlementFile.HEADER.equals(
                                line.replace("\r", "").replace("\uFEFF", ""))) {
                            throw new SettlementFormatException(
                                    1, "expected the header " + SandboxSettlementFile.HEADER);
                        }
                        return List.of();
                    });
        });
    }

    // ---------------------------------------------------------------- HTTP

    private Uni<Answer> get(String path) {
        return call(() -> request(HttpMethod.GET, path).send());
    }

    private Uni<Answer> post(String path, String idempotencyKey, ObjectNode body) {
        return call(() -> request(HttpMethod.POST, path)
                .putHeader("Idempotency-Key", idempotencyKey)
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(body.toString())));
    }

    /**
     * One JSON call (under the limit, if any), sent once more at once when the connection closed unanswered. Fails with
     * {@link NeverSentException} only when the first attempt could not connect.
     */
    private Uni<Answer> call(Supplier<Uni<HttpResponse<Buffer>>> send) {
        Uni<Answer> answered = PspHttp.attempts(send)
                .onFailure(SandboxPsp::closedBeforeAnswer)
                .retry()
                .atMost(1)
                .map(response -> new Answer(response.statusCode(), PspHttp.json(response.bodyAsBuffer(), null)));
        return limit == null ? answered : limit.run(() -> answered);
    }

    private HttpRequest<Buffer> request(HttpMethod method, String path) {
        return client.requestAbs(method, base + path)
                .putHeader("Accept", "application/json")
                .timeout(settings.callTimeout().toMillis());
    }

    /**
     * The connection closed before any answer. A timeout is not this (the PSP may still be working), nor a refused
     * connection (nothing was sent).
     */
    static boolean closedBeforeAnswer(Throwable failure) {
        return !(failure instanceof NeverSentException)
                && anyCause(
                        failure,
                        t -> t instanceof HttpClosedException
                                || (t instanceof IOException
                                        && !(t instanceof ConnectException)
                                        && !(t instanceof InterruptedIOException)));
    }

    /** Every failure but a saturated limit (nothing sent) leaves the outcome unknown. */
    private static boolean sent(Throwable failure) {
        return !(failure instanceof PspSaturatedException);
    }

    /**
     * What made a call's outcome unknown: {@link ChargeResult#CONNECT_FAILED} when its first attempt could not connect
     * (a look-up or refund then just tries again later), {@code resend_connect_failed} when the resend after a closed
     * connection could not (the first attempt may have been executed).
     */
    static String detail(Throwable failure) {
        if (failure instanceof NeverSentException) {
            return ChargeResult.CONNECT_FAILED;
        }
        if (PspHttp.connectFailed(failure)) {
            return "resend_connect_failed";
        }
        if (anyCause(failure, t -> t instanceof TimeoutException)) {
            return "timeout";
        }
        return "io_error " + failure.getClass().getSimpleName();
    }

    private static boolean anyCause(Throwable failure, Predicate<Throwable> test) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (test.test(t)) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
