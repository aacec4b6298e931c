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
 * <p><b>Authorize now, capture later.</b> {@link #authorize} holds the money, {@link #capture} takes all or part of it
 * once, {@link #voidAuthorization} releases it; an authorization the PSP lets expire uncaptured (7 days at Stripe) is
 * CANCELED with detail {@link ChargeResult#EXPIRED}. Each call has one idempotency key per payment: the payment id
 * for the authorization, {@link #captureKey} for its capture, {@link #voidKey} for its void. So an UNKNOWN answer is
 * settled by sending <em>the same call again</em> (same request, hence the same key: the PSP replays its first answer
 * or runs it now if the first never arrived) or by {@link #lookUpCharge} with {@link ChargeQuery#authorization()}
 * set, which reports the authorization's state now: AUTHORIZED, CAPTURED with the captured amount, CANCELED, or
 * NOT_FOUND. Never re-send with a new key: the PSP takes one capture per authorization, and a capture racing a void
 * on one authorization ends with exactly one of them at the PSP, the other DECLINED.
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

    /**
     * Authorizes once per {@link ChargeRequest#paymentId()} (it is the idempotency key, as for {@link #charge}): the
     * money is held, not taken. AUTHORIZED (with the authorized amount), DECLINED, UNKNOWN, or NOT_SENT only when
     * certainly not sent. Settle an UNKNOWN one by sending the same request again or by {@link #lookUpCharge} with
     * {@link ChargeQuery#authorization()} set.
     */
    Uni<ChargeResult> authorize(ChargeRequest request);

    /**
     * Captures {@link CaptureRequest#amount()} (at most the authorized amount; the rest is released) of an
     * authorization, with the idempotency key {@link #captureKey} of the payment: a resend of the same request never
     * captures twice. CAPTURED with {@link ChargeResult#amount()} the captured amount; DECLINED with a stable code when
     * the PSP refuses and captured nothing ({@link ChargeResult#AUTHORIZATION_CANCELED}, {@link
     * ChargeResult#AUTHORIZATION_EXPIRED}, {@link ChargeResult#AMOUNT_EXCEEDS_AUTHORIZED}, {@link
     * ChargeResult#ALREADY_CAPTURED}, {@link ChargeResult#NOT_AUTHORIZED}); UNKNOWN for timeouts, 5xx and lost connections; NOT_SENT only when certainly not
     * sent.
     */
    Uni<ChargeResult> capture(CaptureRequest request);

    /**
     * Voids an authorization, with the idempotency key {@link #voidKey} of the payment. CANCELED (also when it had
     * already expired or been voided: detail {@link ChargeResult#EXPIRED} or {@link ChargeResult#VOIDED}); DECLINED
     * {@link ChargeResult#ALREADY_CAPTURED} when it was captured (nothing was released); UNKNOWN and NOT_SENT as for
     * {@link #capture}.
     */
    Uni<ChargeResult> voidAuthorization(VoidRequest request);

    /**
     * What the PSP knows about a charge or authorization we sent: for the resolver of UNKNOWN payments. Of an
     * authorization ({@link ChargeQuery#authorization()}) its state now: AUTHORIZED, CAPTURED with the captured amount,
     * CANCELED (voided or expired), DECLINED, or NOT_FOUND.
     */
    Uni<ChargeResult> lookUpCharge(ChargeQuery query);

    /** The idempotency key of a payment's one capture. */
    static String captureKey(String paymentId) {
        return "capture-" + paymentId;
    }

    /** The idempotency key of a payment's one void. */
    static String voidKey(String paymentId) {
        return "void-" + paymentId;
    }

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
