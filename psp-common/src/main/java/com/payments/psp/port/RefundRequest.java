package com.payments.psp.port;

/**
 * A refund as we ask for it.
 *
 * @param refundId our refund id: the PSP's idempotency key and the reference stored with the refund
 * @param paymentId our payment id of the refunded charge
 * @param pspChargeId the PSP's id of the refunded charge (Stripe: the PaymentIntent)
 * @param amount in minor units, positive
 * @param currency ISO 4217, upper case
 */
public record RefundRequest(String refundId, String paymentId, String pspChargeId, long amount, String currency) {}
