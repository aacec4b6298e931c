package com.payments.api.rest;

import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeIn;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.info.Contact;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.info.License;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.servers.Server;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * OpenAPI metadata of the merchant API: info (the spec's version, see CHANGELOG.md), servers, tags, security schemes
 * and the components the resources refer to (problem answers, headers, examples). The served document is committed
 * as docs/openapi.yaml; OpenApiDocumentTest fails when they differ. Example bodies are real answers of the local
 * stack.
 */
@OpenAPIDefinition(
        info =
                @Info(
                        title = "Payments API",
                        version = ApiDefinition.VERSION,
                        description = "Merchant API of the payments platform: capture card payments through a PSP with"
                                + " client-supplied idempotency keys, refund them, read them. Within /v1 changes are"
                                + " additive only (docs/api.md, Compatibility); every change is listed in CHANGELOG.md."
                                + " Errors are application/problem+json (RFC 9457) with a stable `code`. Every answer"
                                + " carries a `Request-Id` header (also the `instance` of a problem): quote it when you"
                                + " ask us about a request.",
                        contact = @Contact(name = "Payments platform team"),
                        license = @License(name = "Proprietary", identifier = "LicenseRef-Proprietary")),
        servers = @Server(url = "http://127.0.0.1:8080", description = "The local stack (./local-stack.sh)"),
        tags = {
            @Tag(name = "payments", description = "Capture payments (idempotent by Idempotency-Key) and read them"),
            @Tag(name = "refunds", description = "Refund captured payments and follow a refund until it settles"),
            @Tag(
                    name = "operators",
                    description = "Operator API (operator token, not a merchant key): merchants, API keys and the"
                            + " operations queue"),
            @Tag(name = "psp", description = "Called by the PSP, not by merchants: signed webhook events")
        },
        components =
                @Components(
                        securitySchemes = {
                            @SecurityScheme(
                                    securitySchemeName = ApiDefinition.MERCHANT_KEY,
                                    type = SecuritySchemeType.HTTP,
                                    scheme = "bearer",
                                    description = "Merchant API key: `Authorization: Bearer sk_...`"),
                            @SecurityScheme(
                                    securitySchemeName = ApiDefinition.OPERATOR_TOKEN,
                                    type = SecuritySchemeType.HTTP,
                                    scheme = "bearer",
                                    description = "Operator token (payments.admin.token): `Authorization: Bearer"
                                            + " <token>`. Without a configured token every operator call answers 401"),
                            @SecurityScheme(
                                    securitySchemeName = ApiDefinition.PSP_SIGNATURE,
                                    type = SecuritySchemeType.APIKEY,
                                    in = SecuritySchemeIn.HEADER,
                                    apiKeyName = "Psp-Signature",
                                    description = "HMAC-SHA256 of the PSP's webhook body with the shared secret"
                                            + " (PSP_WEBHOOK_SECRET): `t=<unix seconds>,v1=<hex>`")
                        },
                        parameters = {
                            @Parameter(
                                    name = "Idempotency-Key",
                                    in = ParameterIn.HEADER,
                                    required = true,
                                    description = "Your key for this request, 1-255 printable ASCII characters,"
                                            + " scoped to your merchant. Send the same key when you retry the same"
                                            + " request: it is answered once (a replay carries Idempotent-Replayed:"
                                            + " true). A new request needs a new key.",
                                    schema =
                                            @Schema(
                                                    type = SchemaType.STRING,
                                                    minLength = 1,
                                                    maxLength = 255,
                                                    pattern = "^[\\x20-\\x7E]+$"),
                                    example = "order-1001-try-1"),
                            @Parameter(
                                    name = "traceparent",
                                    in = ParameterIn.HEADER,
                                    description = "W3C trace context; kept with the events this request causes (a new"
                                            + " trace is started without it)",
                                    schema = @Schema(type = SchemaType.STRING),
                                    example = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
                            @Parameter(
                                    name = "tracestate",
                                    in = ParameterIn.HEADER,
                                    description = "W3C trace state, kept with traceparent",
                                    schema = @Schema(type = SchemaType.STRING),
                                    example = "vendor=abc")
                        },
                        headers = {
                            @Header(
                                    name = RequestIdHeaderFilter.COMPONENT,
                                    description = "This request's id, new for each request: quote it when you ask us"
                                            + " about a request (a problem answer carries it as its `instance` too)",
                                    schema =
                                            @Schema(
                                                    type = SchemaType.STRING,
                                                    pattern = "^req_[0-9a-f]{32}$",
                                                    example = "req_4bf92f3577b34da6a3ce929d0e0e4736")),
                            @Header(
                                    name = "IdempotentReplayed",
                                    description = "`true` when this is the stored answer to an earlier request with"
                                            + " the same Idempotency-Key (absent on the first answer)",
                                    schema = @Schema(type = SchemaType.STRING, enumeration = "true")),
                            @Header(
                                    name = "RetryAfter",
                                    description = "Seconds to wait before sending the same request again",
                                    schema = @Schema(type = SchemaType.INTEGER, minimum = "1")),
                            @Header(
                                    name = "WwwAuthenticate",
                                    description = "The authentication scheme expected",
                                    schema = @Schema(type = SchemaType.STRING, enumeration = "Bearer"))
                        },
                        responses = {
                            @APIResponse(
                                    name = "Unauthorized",
                                    responseCode = "401",
                                    description = "`unauthorized`: missing, malformed or unknown credential",
                                    headers = @Header(name = "WWW-Authenticate", ref = "WwwAuthenticate"),
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "unauthorized",
                                                                    value = ApiDefinition.UNAUTHORIZED))),
                            @APIResponse(
                                    name = "NotFound",
                                    responseCode = "404",
                                    description = "`not_found`: no such resource for this caller (also another"
                                            + " merchant's, or a malformed id)",
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "not_found",
                                                                    value = ApiDefinition.NOT_FOUND))),
                            @APIResponse(
                                    name = "NotAcceptable",
                                    responseCode = "406",
                                    description = "`not_acceptable`: the Accept header excludes application/json",
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "not_acceptable",
                                                                    value = ApiDefinition.NOT_ACCEPTABLE))),
                            @APIResponse(
                                    name = "PayloadTooLarge",
                                    responseCode = "413",
                                    description = "`body_too_large`: the body is over the server's 64 KiB cap; the"
                                            + " connection is closed",
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "body_too_large",
                                                                    value = ApiDefinition.BODY_TOO_LARGE_413))),
                            @APIResponse(
                                    name = "UnsupportedMediaType",
                                    responseCode = "415",
                                    description = "`unsupported_media_type`: Content-Type is not application/json",
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "unsupported_media_type",
                                                                    value = ApiDefinition.UNSUPPORTED_MEDIA_TYPE))),
                            @APIResponse(
                                    name = "RateLimited",
                                    responseCode = "429",
                                    description = "`rate_limited`: this merchant is over its request rate;"
                                            + " `too_many_failed_authentications`: too many requests with a missing or"
                                            + " unknown API key came from this client address. Nothing was done or"
                                            + " stored. Retry after Retry-After",
                                    headers = @Header(name = "Retry-After", ref = "RetryAfter"),
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples = {
                                                        @ExampleObject(
                                                                name = "rate_limited",
                                                                value = ApiDefinition.RATE_LIMITED),
                                                        @ExampleObject(
                                                                name = "too_many_failed_authentications",
                                                                value = ApiDefinition.TOO_MANY_FAILED_AUTHENTICATIONS)
                                                    })),
                            @APIResponse(
                                    name = "InternalError",
                                    responseCode = "500",
                                    description = "`internal_error`: an unexpected error on our side",
                                    content =
                                            @Content(
                                                    mediaType = ProblemMapper.PROBLEM_JSON,
                                                    schema = @Schema(implementation = Problem.class),
                                                    examples =
                                                            @ExampleObject(
                                                                    name = "internal_error",
                                                                    value = ApiDefinition.INTERNAL_ERROR)))
                        }))
public class ApiDefinition extends Application {
    /** The document's version: semantic, bumped with every API change (CHANGELOG.md). */
    public static final String VERSION = "1.2.0";

    public static final String MERCHANT_KEY = "merchantKey";
    public static final String OPERATOR_TOKEN = "operatorToken";
    public static final String PSP_SIGNATURE = "pspSignature";
    /** Prefix of a problem's {@code type} (ProblemMapper). */
    public static final String TYPE = "https://docs.payments.example/problems/";

    // Problem answers shared by several operations, as the service renders them (ProblemMapper).
    public static final String UNAUTHORIZED =
            "{\"type\":\"" + TYPE + "unauthorized\",\"title\":\"Unauthorized\",\"status\":401,"
                    + "\"detail\":\"A valid API key is required: Authorization: Bearer <key>\","
                    + "\"code\":\"unauthorized\"}";
    public static final String NOT_FOUND = "{\"type\":\"" + TYPE + "not_found\",\"title\":\"Not found\",\"status\":404,"
            + "\"detail\":\"No such resource\",\"code\":\"not_found\"}";
    public static final String NOT_ACCEPTABLE =
            "{\"type\":\"" + TYPE + "not_acceptable\",\"title\":\"Not acceptable\",\"status\":406,"
                    + "\"detail\":\"The API answers application/json\",\"code\":\"not_acceptable\"}";
    public static final String BODY_TOO_LARGE_413 =
            "{\"type\":\"" + TYPE + "body_too_large\",\"title\":\"Payload too large\","
                    + "\"status\":413,\"detail\":\"The request body is too large\",\"code\":\"body_too_large\"}";
    public static final String UNSUPPORTED_MEDIA_TYPE =
            "{\"type\":\"" + TYPE + "unsupported_media_type\",\"title\":\"Unsupported media type\","
                    + "\"status\":415,\"detail\":\"Send Content-Type: application/json\","
                    + "\"code\":\"unsupported_media_type\"}";
    public static final String RATE_LIMITED = "{\"type\":\"" + TYPE + "rate_limited\",\"title\":\"Too many requests\","
            + "\"status\":429,\"detail\":\"This merchant is over its request rate; retry after the Retry-After"
            + " seconds\",\"code\":\"rate_limited\"}";
    public static final String TOO_MANY_FAILED_AUTHENTICATIONS = "{\"type\":\"" + TYPE
            + "too_many_failed_authentications\",\"title\":\"Too many failed authentications\",\"status\":429,"
            + "\"detail\":\"Too many requests with a missing or unknown API key came from this address; retry after"
            + " the Retry-After seconds\",\"code\":\"too_many_failed_authentications\"}";
    public static final String INTERNAL_ERROR =
            "{\"type\":\"" + TYPE + "internal_error\",\"title\":\"Internal error\",\"status\":500,"
                    + "\"detail\":\"Something went wrong on our side\",\"code\":\"internal_error\"}";
    public static final String INVALID_JSON =
            "{\"type\":\"" + TYPE + "invalid_json\",\"title\":\"Bad request\",\"status\":400,"
                    + "\"detail\":\"The body is not valid JSON\",\"code\":\"invalid_json\"}";
    public static final String UNKNOWN_FIELD =
            "{\"type\":\"" + TYPE + "unknown_field\",\"title\":\"Bad request\",\"status\":400,"
                    + "\"detail\":\"Unknown field: note\",\"code\":\"unknown_field\"}";
    public static final String BODY_TOO_LARGE =
            "{\"type\":\"" + TYPE + "body_too_large\",\"title\":\"Bad request\",\"status\":400,"
                    + "\"detail\":\"The request body exceeds 16384 bytes\",\"code\":\"body_too_large\"}";
    public static final String MISSING_IDEMPOTENCY_KEY =
            "{\"type\":\"" + TYPE + "missing_idempotency_key\",\"title\":\"Bad request\","
                    + "\"status\":400,\"detail\":\"The Idempotency-Key header is required\","
                    + "\"code\":\"missing_idempotency_key\"}";
    public static final String INVALID_IDEMPOTENCY_KEY =
            "{\"type\":\"" + TYPE + "invalid_idempotency_key\",\"title\":\"Bad request\","
                    + "\"status\":400,\"detail\":\"Idempotency-Key must be 1-255 printable ASCII characters\","
                    + "\"code\":\"invalid_idempotency_key\"}";
    public static final String INVALID_AMOUNT =
            "{\"type\":\"" + TYPE + "invalid_amount\",\"title\":\"Bad request\",\"status\":400,"
                    + "\"detail\":\"amount must be an integer between 1 and 1000000000000\","
                    + "\"code\":\"invalid_amount\"}";
    public static final String IDEMPOTENCY_KEY_IN_USE =
            "{\"type\":\"" + TYPE + "idempotency_key_in_use\",\"title\":\"Request in progress\","
                    + "\"status\":409,\"detail\":\"A request with this Idempotency-Key is still in progress; retry later\","
                    + "\"code\":\"idempotency_key_in_use\"}";
    /** The 503 of a request shed because the instance is at capacity ({@link com.payments.api.common.Refusal#overloaded}). */
    public static final String SERVICE_OVERLOADED =
            "{\"type\":\"" + TYPE + "service_overloaded\",\"title\":\"Service overloaded\","
                    + "\"status\":503,\"detail\":\"The service is at capacity; nothing was stored. Retry with the same"
                    + " Idempotency-Key\",\"code\":\"service_overloaded\"}";

    public static final String IDEMPOTENCY_KEY_REUSED =
            "{\"type\":\"" + TYPE + "idempotency_key_reused\",\"title\":\"Idempotency-Key reused\","
                    + "\"status\":422,\"detail\":\"This Idempotency-Key was used with a different request\","
                    + "\"code\":\"idempotency_key_reused\"}";
}
