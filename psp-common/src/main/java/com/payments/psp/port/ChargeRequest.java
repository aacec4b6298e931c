package com.payments.psp.port;

/**
 * A charge as we ask for it.
 *
 * @param paymentId our payment id: the PSP's idempotency key and the reference stored with the charge
 * @param amount in minor units, positive
 * @param currency ISO 4217, upper case (an adapter converts to the PSP's spelling)
 * @param source the merchant's payment source, a PSP token (docs/stripe.md, "Sources")
 */
public record ChargeRequest(String paymentId, long amount, String currency, String source) {}
