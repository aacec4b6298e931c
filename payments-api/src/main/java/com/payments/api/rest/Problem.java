package com.payments.api.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Body of an {@code application/problem+json} answer (RFC 9457) plus our stable {@code code}. */
@RegisterForReflection
@Schema(
        description = "Problem details (RFC 9457) with a stable machine-readable `code`; `detail` never quotes the"
                + " request")
public record Problem(
        @Schema(required = true, format = "uri", description = "https://docs.payments.example/problems/<code>")
                String type,
        @Schema(required = true, description = "Short human-readable summary") String title,
        @Schema(required = true, description = "The HTTP status code") int status,
        @Schema(required = true, description = "A fixed human-readable explanation") String detail,
        @Schema(
                        required = true,
                        description = "Stable code to branch on (docs/api.md, Errors); new codes may be added within"
                                + " /v1")
                String code,
        @JsonInclude(JsonInclude.Include.NON_NULL)
                @Schema(
                        description = "This request's id, as in the `Request-Id` header: quote it when you ask us"
                                + " about the answer")
                String instance) {}
