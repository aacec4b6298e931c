package com.payments.psp.port;

import com.payments.psp.PspSaturatedException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.time.LocalDate;
import java.util.function.Function;

/**
 * Everything the platform asks of a PSP, whichever PSP it is (docs/stripe.md). An adapter turns each answer into one of
 * our outcomes: success, decline, unknown (for a charge CAPTURED, DECLINED, UNKNOWN). An answer that proves nothing
 * (a timeout, a 5xx, a 429 after the retries, a conflict on the idempotency key) is UNKNOWN, never a decline: the
 * resolver settles it later with {@link #lookUpCharge}.
 *
 * <p>The returned {@link Uni}s never block and fail only with {@link PspSaturatedException}, when the instance's limit
 * of concurrent PSP calls had no room and nothing was sent; every other problem is an UNKNOWN result.
 */
public interface PspPort {

    /** {@code sandbox} or {@code stripe}: the value of {@code psp.provider} that selects this adapter. */
    String provider();

    /**
     * Whether the PSP can take {@code amount} (ISO 4217 minor units, positive) of {@code currency}: null when it can,
     * else why not. CPU only; callers ask before they store anything, so that a refused amount changes nothing. The
     * sandbox protocol takes every amount (the default); Stripe has its own units per currency (docs/stripe.md,
     * "Currencies").
     */
    default AmountRefusal refusal(long amount, String currency) {
        return null;
    }

    /** Charges once per {@link ChargeRequest#paymentId()} (it is the idempotency key), capturing at once. */
    Uni<ChargeResult> charge(ChargeRequest request);

    /** What the PSP knows about a charge we sent: for the resolver of UNKNOWN payments. */
    Uni<ChargeResult> lookUpCharge(ChargeQuery query);

    /** Refunds once per {@link RefundRequest#refundId()} (it is the idempotency key). */
    Uni<RefundResult> refund(RefundRequest request);

    /** What the PSP knows about a refund we sent: for the sync of PENDING and UNKNOWN refunds. */
    Uni<RefundResult> lookUpRefund(RefundQuery query);

    /**
     * Verifies a webhook's signature over the exact bytes received and parses it. CPU only, safe on the event loop.
     *
     * @param header the request's header of a name (case-insensitive), null when absent
     * @throws WebhookRejectedException when the signature is missing, wrong or too old, or the body is not an event
     */
    PspEvent verifyWebhook(byte[] body, Function<String, String> header);

    /** The money movements the PSP booked on a UTC day, for the reconciler; paged lazily, in the PSP's order. */
    Multi<SettlementLine> settlementLines(LocalDate day);

    /** Releases the adapter's HTTP connections. */
    default void close() {}
}
