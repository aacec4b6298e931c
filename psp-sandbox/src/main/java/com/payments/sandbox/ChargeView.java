package com.payments.sandbox;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The PSP's answer for a charge (docs/architecture.md §5), plus amount, currency and creation time; of an
 * authorization also {@code capturedAmount}, {@code cancellationReason} ({@code voided}, {@code expired}) and {@code
 * expiresAt}. Written by hand with Jackson, hence registered for the native image.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@RegisterForReflection
public record ChargeView(
        String id,
        String reference,
        String status,
        String declineCode,
        long amount,
        String currency,
        String created,
        String captureMethod,
        Long capturedAmount,
        String cancellationReason,
        String expiresAt) {}
