package com.payments.sandbox;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** Body of {@code POST /v1/charges/{id}/capture}: the amount to capture, at most the authorized amount. */
@RegisterForReflection
public record CaptureRequest(Long amount) {}
