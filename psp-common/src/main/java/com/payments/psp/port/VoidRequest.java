package com.payments.psp.port;

/**
 * A void of an authorization ({@link PspPort#voidAuthorization}).
 *
 * @param paymentId our payment id: the authorization's reference; the void's idempotency key is derived from it
 *     ({@link PspPort#voidKey})
 * @param pspChargeId the PSP's id of the authorization (Stripe: the PaymentIntent)
 */
public record VoidRequest(String paymentId, String pspChargeId) {}
