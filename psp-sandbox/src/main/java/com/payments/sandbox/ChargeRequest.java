package com.payments.sandbox;

/** Body of {@code POST /v1/charges}. */
public record ChargeRequest(String reference, Long amount, String currency, String source) {}
