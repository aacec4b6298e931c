package com.payments.api.rest;

/**
 * An error answer as RFC 9457 problem details with a stable {@code code}; thrown anywhere, rendered by
 * {@link ProblemMapper}. {@code detail} is a fixed text written by us: never put request values in it.
 */
public final class ApiProblem extends RuntimeException {
    private final int status;
    private final String code;
    private final String title;
    private final Integer retryAfterSeconds;

    public ApiProblem(int status, String code, String title, String detail, Integer retryAfterSeconds) {
        super(detail, null, false, false);
        this.status = status;
        this.code = code;
        this.title = title;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static ApiProblem badRequest(String code, String detail) {
        return new ApiProblem(400, code, "Bad request", detail, null);
    }

    public static ApiProblem unauthorized() {
        return new ApiProblem(
                401, "unauthorized", "Unauthorized", "A valid API key is required: Authorization: Bearer <key>", null);
    }

    public static ApiProblem notFound() {
        return new ApiProblem(404, "not_found", "Not found", "No such resource", null);
    }

    /**
     * 503: the request was shed because the service is at capacity (its first statement did not start in time);
     * nothing of it was stored, so the same key may be sent again.
     */
    public static ApiProblem overloaded(int retryAfterSeconds) {
        return new ApiProblem(
                503,
                "service_overloaded",
                "Service overloaded",
                "The service is at capacity; nothing was stored. Retry with the same Idempotency-Key",
                retryAfterSeconds);
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public String title() {
        return title;
    }

    public String detail() {
        return getMessage();
    }

    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
