package com.payments.api.client;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** Body of {@code POST /v1/charges}; {@code reference} is our payment id. */
@RegisterForReflection
public record PspChargeRequest(String reference, long amount, String currency, String source) {}
