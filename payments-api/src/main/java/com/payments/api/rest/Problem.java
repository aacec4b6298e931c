package com.payments.api.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** Body of an {@code application/problem+json} answer (RFC 9457) plus our stable {@code code}. */
@RegisterForReflection
public record Problem(
        String type,
        String title,
        int status,
        String detail,
        String code,
        @JsonInclude(JsonInclude.Include.NON_NULL) String instance) {}
