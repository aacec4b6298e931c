package com.payments.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.api.common.ApiMetrics;
import io.quarkus.logging.Log;
import io.vertx.core.http.HttpServerResponse;
import jakarta.ws.rs.WebApplicationException;
import java.nio.charset.StandardCharsets;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * The one place where errors become {@code application/problem+json}. Exception messages of libraries (Jackson,
 * the SQL client) never reach the client or the log line text, since they may echo request data such as a card
 * number.
 */
public class ProblemMapper {
    public static final String PROBLEM_JSON = "application/problem+json";
    private static final String TYPE_BASE = "https://docs.payments.example/problems/";

    private final ObjectMapper mapper;
    private final ApiMetrics metrics;

    public ProblemMapper(ObjectMapper mapper, ApiMetrics metrics) {
        this.mapper = mapper;
        this.metrics = metrics;
    }

    @ServerExceptionMapper
    public RestResponse<byte[]> problem(ApiProblem problem, HttpServerResponse response) {
        metrics.rejected(problem.status(), problem.code());
        return render(problem, response.headers().get(RequestIdRoute.HEADER));
    }

    @ServerExceptionMapper
    public RestResponse<byte[]> web(WebApplicationException e, HttpServerResponse response) {
        int status = e.getResponse().getStatus();
        ApiProblem problem =
                switch (status) {
                    case 404 -> ApiProblem.notFound();
                    case 405 ->
                        new ApiProblem(
                                405, "method_not_allowed", "Method not allowed", "Method not allowed here", null);
                    case 406 ->
                        new ApiProblem(
                                406, "not_acceptable", "Not acceptable", "The API answers application/json", null);
                    case 413 -> ApiProblem.badRequest("body_too_large", "The request body is too large");
                    case 415 ->
                        new ApiProblem(
                                415,
                                "unsupported_media_type",
                                "Unsupported media type",
                                "Send Content-Type: application/json",
                                null);
                    default ->
                        status >= 400 && status < 500
                                ? ApiProblem.badRequest("bad_request", "The request is malformed")
                                : internal();
                };
        return problem(problem, response);
    }

    @ServerExceptionMapper
    public RestResponse<byte[]> unexpected(Throwable e, HttpServerResponse response) {
        // Class name only: a message could carry request data.
        Log.errorf("Unexpected error: %s", e.getClass().getName());
        Log.debug("Unexpected error", e);
        return problem(internal(), response);
    }

    private static ApiProblem internal() {
        return new ApiProblem(500, "internal_error", "Internal error", "Something went wrong on our side", null);
    }

    /** {@code requestId}: the {@code instance} of the answer (RequestIdRoute sets it as a header). */
    private RestResponse<byte[]> render(ApiProblem problem, String requestId) {
        Problem body = new Problem(
                TYPE_BASE + problem.code(),
                problem.title(),
                problem.status(),
                problem.detail(),
                problem.code(),
                requestId);
        byte[] bytes;
        try {
            bytes = mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            bytes = ("{\"status\":" + problem.status() + "}").getBytes(StandardCharsets.UTF_8);
        }
        RestResponse.ResponseBuilder<byte[]> builder = RestResponse.ResponseBuilder.<byte[]>create(problem.status())
                .entity(bytes)
                .type(PROBLEM_JSON);
        if (problem.retryAfterSeconds() != null) {
            builder.header("Retry-After", problem.retryAfterSeconds().toString());
        }
        if (problem.status() == 401) {
            builder.header("WWW-Authenticate", "Bearer");
        }
        return builder.build();
    }
}
