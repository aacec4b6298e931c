package com.payments.sandbox;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The PSP's answer for a refund (docs/architecture.md §5), plus charge, amount and creation time; written by hand with
 * Jackson, hence registered for the native image.
 */
@RegisterForReflection
public record RefundView(String id, String reference, String status, String charge, long amount, String created) {}
