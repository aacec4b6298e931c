package com.payments.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.api.common.ApiMetrics;
import com.payments.api.common.DatabaseUnavailable;
import com.payments.api.common.Refusal;
import io.quarkus.logging.Log;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.core.http.HttpServerResponse;
import jakarta.ws.rs.WebApplicationException;
import java.nio.charset.StandardCharsets;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * The one place where errors become {@code application/problem+json} (RFC 9457 with a stable {@code code}): the
 * {@link Refusal}s of the services and resources, with the status their kind stands for, authentication failures, and
 * what Quarkus refuses itself. Exception messages of libraries (Jackson, the SQL client) never reach the client or the
 * log line text, since they may echo request data such as a card number.
 */
public class ProblemMapper {
    public static final String PROBLEM_JSON = "application/problem+json";
    private static final String TYPE_BASE = "https://docs.payments.example/problems/";

    /** An error answer; {@code detail} is a fixed text written by us, never request values. */
    private record Answer(int status, String code, String title, String detail, Integer retryAfterSeconds) {}

    private static final Answer UNAUTHORIZED = new Answer(
            401, "unauthorized", "Unauthorized", "A valid API key is required: Authorization: Bearer <key>", null);
    /** A failover takes seconds (docs/operations.md, "Database failover"): retry soon, with the same key. */
    private static final Answer DATABASE_UNAVAILABLE = new Answer(
            503,
            "database_unavailable",
            "Service unavailable",
            "Our database is unavailable for a moment. Retry with the same Idempotency-Key",
            1);

    private static final Answer INTERNAL =
            new Answer(500, "internal_error", "Internal error", "Something went wrong on our side", null);

    private final ObjectMapper mapper;
    private final ApiMetrics metrics;

    public ProblemMapper(ObjectMapper mapper, ApiMetrics metrics) {
        this.mapper = mapper;
        this.metrics = metrics;
    }

    @ServerExceptionMapper
    public RestResponse<byte[]> refusal(Refusal refusal, HttpServerResponse response) {
        int status =
                switch (refusal.kind()) {
                    case INVALID -> 400;
                    case NOT_FOUND -> 404;
                    case CONFLICT -> 409;
                    case UNPROCESSABLE -> 422;
                    case TOO_MANY_REQUESTS -> 429;
                    case UNAVAILABLE -> 503;
                };
        return answer(
                new Answer(status, refusal.code(), refusal.title(), refusal.detail(), refusal.retryAfterSeconds()),
                response);
    }

    /**
     * No identity, a wrong one, or one of the other kind (an operator token on a merchant call, a merchant key on an
     * operator call): 401 with {@code WWW-Authenticate: Bearer} alike, so the answer tells nothing about the
     * credential (docs/architecture.md §4). An address over its failure allowance gets the 429 its {@link Refusal}
     * says, wherever authentication wrapped it.
     */
    @ServerExceptionMapper({AuthenticationFailedException.class, UnauthorizedException.class, ForbiddenException.class})
    public RestResponse<byte[]> unauthenticated(RuntimeException e, HttpServerResponse response) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof Refusal refusal) {
                return refusal(refusal, response);
            }
        }
        return answer(UNAUTHORIZED, response);
    }

    /** What Quarkus refused before a resource ran: unknown path or method, wrong media types, a bad parameter. */
    @ServerExceptionMapper
    public RestResponse<byte[]> web(WebApplicationException e, HttpServerResponse response) {
        int status = e.getResponse().getStatus();
        return switch (status) {
            case 404 -> refusal(Refusal.notFound(), response);
            case 405 ->
                answer(
                        new Answer(405, "method_not_allowed", "Method not allowed", "Method not allowed here", null),
                        response);
            case 406 ->
                answer(
                        new Answer(406, "not_acceptable", "Not acceptable", "The API answers application/json", null),
                        response);
            case 413 -> refusal(Refusal.invalid("body_too_large", "The request body is too large"), response);
            case 415 ->
                answer(
                        new Answer(
                                415,
                                "unsupported_media_type",
                                "Unsupported media type",
                                "Send Content-Type: application/json",
                                null),
                        response);
            default ->
                status >= 400 && status < 500
                        ? refusal(Refusal.invalid("bad_request", "The request is malformed"), response)
                        : answer(INTERNAL, response);
        };
    }

    @ServerExceptionMapper
    public RestResponse<byte[]> unexpected(Throwable e, HttpServerResponse response) {
        if (DatabaseUnavailable.causedBy(e)) {
            Log.warnf("Database unavailable: %s", e.getClass().getName());
            return answer(DATABASE_UNAVAILABLE, response);
        }
        // Class name only: a message could carry request data.
        Log.errorf("Unexpected error: %s", e.getClass().getName());
        Log.debug("Unexpected error", e);
        return answer(INTERNAL, response);
    }

    /** The problem+json answer; its {@code instance} is the request id (RequestIdRoute sets it as a header). */
    private RestResponse<byte[]> answer(Answer answer, HttpServerResponse response) {
        metrics.rejected(answer.status(), answer.code());
        Problem body = new Problem(
                TYPE_BASE + answer.code(),
                answer.title(),
                answer.status(),
                answer.detail(),
                answer.code(),
                response.headers().get(RequestIdRoute.HEADER));
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            bytes = ("{\"status\":" + answer.status() + "}").getBytes(StandardCharsets.UTF_8);
        }
        RestResponse.ResponseBuilder<byte[]> builder = RestResponse.ResponseBuilder.<byte[]>create(answer.status())
                .entity(bytes)
                .type(PROBLEM_JSON);
        if (answer.retryAfterSeconds() != null) {
            builder.header("Retry-After", answer.retryAfterSeconds().toString());
        }
        if (answer.status() == 401) {
            builder.header("WWW-Authenticate", "Bearer");
        }
        return builder.build();
    }
}
