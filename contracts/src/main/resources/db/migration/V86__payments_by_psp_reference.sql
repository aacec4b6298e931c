-- Issue 20: a PSP's dispute (Stripe's charge.dispute.created) names only the PSP's charge (the PaymentIntent), so
-- payments-api's webhook finds the payment by psp_reference. Partial: only captured (or settled) payments have one.
-- IF NOT EXISTS: on a large table an operator may build it beforehand with CREATE INDEX CONCURRENTLY under this name
-- (docs/operations.md), and the migration then does nothing.
CREATE INDEX IF NOT EXISTS payments_psp_reference ON payments (psp_reference) WHERE psp_reference IS NOT NULL;
