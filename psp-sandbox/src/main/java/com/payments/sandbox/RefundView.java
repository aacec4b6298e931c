package com.payments.sandbox;

/** The PSP's answer for a refund (docs/architecture.md §5), plus charge, amount and creation time. */
public record RefundView(String id, String reference, String status, String charge, long amount, String created) {}
