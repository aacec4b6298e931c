package com.payments.api.client;

/**
 * A definite PSP answer to a charge: {@code captured} with the PSP's charge id, or refused (declined or rejected as
 * invalid) with a code. Anything not definite is an exception from {@link PspGateway#charge}.
 */
public record PspChargeResult(boolean captured, String pspReference, String declineCode) {}
