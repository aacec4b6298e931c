package com.payments.api.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;
import java.util.UUID;

/** SQL of the refund reservation: the conditional update of the payment and the PENDING refund row. */
@ApplicationScoped
public class RefundRepository {

    /** What a won reservation needs to build the refund and its command. */
    public record Reserved(String currency, String pspReference) {}

    /**
     * The conditional reservation (design.md §3): adds {@code amount} to refunded_amount only on this merchant's
     * CAPTURED payment and only if the total stays within the captured amount. The row lock serializes concurrent
     * reservations of one payment; each re-checks the condition on the committed value. Null: nothing reserved.
     */
    public Uni<Reserved> reserve(SqlClient client, UUID merchantId, UUID paymentId, long amount) {
        return client.preparedQuery(
                        """
                        UPDATE payments SET refunded_amount = refunded_amount + $3
                         WHERE id = $1 AND merchant_id = $2 AND status = 'CAPTURED'
                           AND refunded_amount + $3 <= amount
                         RETURNING currency, psp_reference""")
                .execute(Tuple.of(paymentId, merchantId, amount))
                .map(rows -> {
                    if (rows.rowCount() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new Reserved(row.getString("currency"), row.getString("psp_reference"));
                });
    }

    /** Status of this merchant's payment, or null (no such payment for this merchant): why a reservation failed. */
    public Uni<String> paymentStatus(SqlClient client, UUID merchantId, UUID paymentId) {
        return client.preparedQuery("SELECT status FROM payments WHERE id = $1 AND merchant_id = $2")
                .execute(Tuple.of(paymentId, merchantId))
                .map(rows ->
                        rows.rowCount() == 0 ? null : rows.iterator().next().getString(0));
    }

    /** Inserts the refund PENDING with next_attempt_at NULL (refunds-worker executes it; its sync picks it by age). */
    public Uni<Void> insertPending(
            SqlClient client, UUID id, UUID paymentId, UUID merchantId, long amount, String currency, String reason) {
        return client.preparedQuery(
                        """
                        INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, reason)
                        VALUES ($1, $2, $3, $4, $5, $6)""")
                .execute(Tuple.from(Arrays.asList(id, paymentId, merchantId, amount, currency, reason)))
                .replaceWithVoid();
    }
}
