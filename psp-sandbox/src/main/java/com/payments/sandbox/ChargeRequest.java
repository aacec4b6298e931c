package com.payments.sandbox;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** Body of {@code POST /v1/charges}, read by hand in ChargeRoute, hence registered for the native image. */
@RegisterForReflection
public record ChargeRequest(String reference, Long amount, String currency, String source) {}
