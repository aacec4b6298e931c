package com.payments.refunds.repository;

import com.payments.refunds.Refund;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** Ledger bookings of refunds (docs/operations.md, "Ledger accounts"). */
@ApplicationScoped
public class LedgerRepository {

    /**
     * Books a succeeded refund: {@code merchant_payable} +amount, {@code psp_receivable} −amount, one transaction of
     * kind REFUND per refund id (UNIQUE (kind, reference) refuses a second one).
     */
    public Uni<Void> bookRefund(SqlClient client, Refund refund) {
        return client.preparedQuery(
                        """
                        WITH t AS (
                            INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
                            VALUES ('REFUND', $1, $2, 'refund of payment ' || $3::text)
                            RETURNING id)
                        INSERT INTO ledger_entries (transaction_id, account, amount, currency)
                        SELECT t.id, e.account, e.amount, $5::text FROM t,
                               (VALUES ('merchant_payable', $4::bigint), ('psp_receivable', -$4::bigint))
                                   AS e (account, amount)""")
                .execute(Tuple.of(
                        refund.id().toString(),
                        refund.merchantId(),
                        refund.paymentId().toString(),
                        refund.amount(),
                        refund.currency()))
                .replaceWithVoid();
    }
}
