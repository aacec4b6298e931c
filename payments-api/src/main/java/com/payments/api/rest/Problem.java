package com.payments.api.rest;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** Body of an {@code application/problem+json} answer (RFC 9457) plus our stable {@code code}. */
@RegisterForReflection
public record Problem(String type, String title, int status, String detail, String code) {}
