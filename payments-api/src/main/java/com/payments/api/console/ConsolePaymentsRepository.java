package com.payments.api.console;

import static com.payments.api.console.ConsoleSql.list;

import com.payments.contracts.SqlResource;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/** The payment lookup's and a payment's story's reads. Nothing here writes. */
@ApplicationScoped
public class ConsolePaymentsRepository {
    private static final String STORY = SqlResource.load(ConsolePaymentsRepository.class, "console-story.sql");

    private final Pool pool;

    public ConsolePaymentsRepository(Pool pool) {
        this.pool = pool;
    }

    /**
     * A payment as the lookup lists it: its state, capture method, amount (for a manual payment the authorized amount)
     * and captured amount.
     */
    public record Listed(
            UUID id,
            String status,
            String captureMethod,
            long amount,
            Long capturedAmount,
            String currency,
            OffsetDateTime createdAt) {}

    /**
     * What a payment has captured: the captured amount once CAPTURED (an automatic capture takes the whole amount), or
     * what its capture asks for while CAPTURING; null otherwise.
     */
    static final String CAPTURED_AMOUNT =
            "CASE WHEN p.status IN ('CAPTURING', 'CAPTURED') THEN coalesce(p.captured_amount, p.amount) END";

    private static final String LISTED =
            """
            SELECT p.id, p.status, p.capture_method, p.amount, %s AS captured, p.currency, p.created_at
              FROM payments p WHERE p.id IN (%s)
             ORDER BY p.created_at DESC, p.id""";
    private static final String BY_ID = LISTED.formatted(
            CAPTURED_AMOUNT,
            "SELECT id FROM payments WHERE id = $1 UNION SELECT payment_id FROM refunds WHERE id = $1");
    // order_id alone and psp_reference have no index of their own: a sequential scan, fine for a lookup by hand
    // (docs/console.md).
    private static final String BY_REFERENCE = LISTED.formatted(
            CAPTURED_AMOUNT,
            """
            SELECT id FROM payments WHERE order_id = $1 OR psp_reference = $1
            UNION SELECT payment_id FROM refunds WHERE psp_reference = $1
            LIMIT 20""");

    /** Payments matching a lookup: payment id, refund id, order id or PSP reference (at most 20), newest first. */
    public Uni<List<Listed>> findPayments(String query) {
        UUID id = uuidOrNull(query);
        return id != null
                ? list(pool, BY_ID, Tuple.of(id), ConsolePaymentsRepository::listed)
                : list(pool, BY_REFERENCE, Tuple.of(query), ConsolePaymentsRepository::listed);
    }

    private static Listed listed(Row r) {
        return new Listed(
                r.getUUID("id"),
                r.getString("status"),
                r.getString("capture_method"),
                r.getLong("amount"),
                r.getLong("captured"),
                r.getString("currency"),
                r.getOffsetDateTime("created_at"));
    }

    /**
     * The payment row as the story shows it, or null. {@code amount} is what was asked for: for a MANUAL payment the
     * authorized amount ({@code authorizedAt} once authorized); {@code capturedAmount} as in {@link Listed}.
     */
    public record PaymentRow(
            UUID id,
            UUID merchantId,
            String merchantName,
            String orderId,
            long amount,
            String currency,
            String status,
            String captureMethod,
            Long capturedAmount,
            OffsetDateTime authorizedAt,
            long refundedAmount,
            String pspReference,
            String declineCode,
            int attempts,
            OffsetDateTime nextAttemptAt,
            String lastError,
            OffsetDateTime createdAt,
            OffsetDateTime capturedAt) {}

    private static final String PAYMENT =
            """
            SELECT p.id, p.merchant_id, m.name, p.order_id, p.amount, p.currency, p.status, p.capture_method,
                   %s AS captured, p.authorized_at, p.refunded_amount, p.psp_reference, p.decline_code, p.attempts,
                   p.next_attempt_at, p.last_error, p.created_at, p.captured_at
              FROM payments p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $1"""
                    .formatted(CAPTURED_AMOUNT);

    public Uni<PaymentRow> payment(UUID id) {
        return ConsoleSql.first(
                pool,
                PAYMENT,
                Tuple.of(id),
                r -> new PaymentRow(
                        r.getUUID("id"),
                        r.getUUID("merchant_id"),
                        r.getString("name"),
                        r.getString("order_id"),
                        r.getLong("amount"),
                        r.getString("currency"),
                        r.getString("status"),
                        r.getString("capture_method"),
                        r.getLong("captured"),
                        r.getOffsetDateTime("authorized_at"),
                        r.getLong("refunded_amount"),
                        r.getString("psp_reference"),
                        r.getString("decline_code"),
                        r.getInteger("attempts"),
                        r.getOffsetDateTime("next_attempt_at"),
                        r.getString("last_error"),
                        r.getOffsetDateTime("created_at"),
                        r.getOffsetDateTime("captured_at")));
    }

    /** One timeline entry: when, from which record, what happened. */
    public record Event(OffsetDateTime at, String source, String title, String detail) {}

    /**
     * Everything recorded about a payment and its refunds, each as timeline entries: transitions, PSP calls (the
     * capture's charge, the resolver's look-ups and re-sent charges), idempotency key and its replays, webhooks,
     * ledger entries (with the running balance per account), outbox events (created, sent), refunds, dead-lettered
     * refund commands, settlement lines, breaks, operations items and operator actions. One statement; the caller
     * sorts.
     */
    public Uni<List<Event>> story(UUID paymentId) {
        return list(
                pool,
                STORY,
                Tuple.of(paymentId),
                r -> new Event(
                        r.getOffsetDateTime("at"), r.getString("source"), r.getString("title"), r.getString("detail")));
    }

    static UUID uuidOrNull(String value) {
        if (value == null || value.length() != 36) {
            return null;
        }
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
