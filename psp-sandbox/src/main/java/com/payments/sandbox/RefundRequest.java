package com.payments.sandbox;

/** Body of {@code POST /v1/refunds}. */
public record RefundRequest(String reference, String charge, Long amount) {}
