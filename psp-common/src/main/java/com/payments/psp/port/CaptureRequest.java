package com.payments.psp.port;

/**
 * A capture of an authorization ({@link PspPort#capture}).
 *
 * @param paymentId our payment id: the authorization's reference; the capture's idempotency key is derived from it
 *     ({@link PspPort#captureKey}), so that one payment has exactly one capture at the PSP
 * @param pspChargeId the PSP's id of the authorization (Stripe: the PaymentIntent)
 * @param amount in minor units, positive, at most the authorized amount (the rest is released)
 * @param currency ISO 4217, upper case: the authorization's
 */
public record CaptureRequest(String paymentId, String pspChargeId, long amount, String currency) {}
