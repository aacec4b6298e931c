package com.payments.api.common;

/**
 * A request that the API's rules refuse, with a stable {@code code} (docs/api.md, Errors) and a fixed explanation.
 * The services throw it; {@link com.payments.api.rest.ProblemMapper} answers it as problem+json, its {@link Kind}
 * choosing the status. {@code detail} is a fixed text written by us: never put request values in it.
 */
public final class Refusal extends RuntimeException {
    /** Why the request is refused. */
    public enum Kind {
        /** The request is malformed or a field breaks its rule. */
        INVALID,
        /** No such resource for this caller (another merchant's resource is none either). */
        NOT_FOUND,
        /** The state does not allow it now: a request in flight, an outcome pending, already done. */
        CONFLICT,
        /** Well formed, but a business rule says no. */
        UNPROCESSABLE,
        /** The caller is over a rate. */
        TOO_MANY_REQUESTS,
        /** It cannot be served now and nothing of it was stored: the same request may be sent again. */
        UNAVAILABLE
    }

    private final Kind kind;
    private final String code;
    private final String title;
    private final Integer retryAfterSeconds;

    public Refusal(Kind kind, String code, String title, String detail, Integer retryAfterSeconds) {
        super(detail, null, false, false);
        this.kind = kind;
        this.code = code;
        this.title = title;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static Refusal invalid(String code, String detail) {
        return new Refusal(Kind.INVALID, code, "Bad request", detail, null);
    }

    public static Refusal notFound() {
        return new Refusal(Kind.NOT_FOUND, "not_found", "Not found", "No such resource", null);
    }

    /**
     * The request was shed because the service is at capacity (its first statement did not start in time); nothing
     * of it was stored, so the same key may be sent again.
     */
    public static Refusal overloaded(int retryAfterSeconds) {
        return new Refusal(
                Kind.UNAVAILABLE,
                "service_overloaded",
                "Service overloaded",
                "The service is at capacity; nothing was stored. Retry with the same Idempotency-Key",
                retryAfterSeconds);
    }

    public Kind kind() {
        return kind;
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

    /** Seconds after which the same request may succeed; null when waiting does not help. */
    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
