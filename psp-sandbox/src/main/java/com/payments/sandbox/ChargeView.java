package com.payments.sandbox;

import com.fasterxml.jackson.annotation.JsonInclude;

/** The PSP's answer for a charge (docs/architecture.md §5), plus amount, currency and creation time. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChargeView(
        String id, String reference, String status, String declineCode, long amount, String currency, String created) {}
