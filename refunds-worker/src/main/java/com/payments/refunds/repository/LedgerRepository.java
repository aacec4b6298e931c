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
     * kind REFUND per refund id (UNIQUE (kind, reference) refuses a second one), through the
     * {@code book_ledger_transaction} function of the schema.
     */
    public Uni<Void> bookRefund(SqlClient client, Refund refund) {
        return client.preparedQuery(
                        """
                        SELECT book_ledger_transaction('REFUND', 'merchant_payable', 'psp_receivable', $1, $2,
                                                       'refund of payment ' || $3::text, $4, $5, false)""")
                .execute(Tuple.of(
                        refund.id().toString(),
                        refund.merchantId(),
                        refund.paymentId().toString(),
                        refund.amount(),
                        refund.currency()))
                .replaceWithVoid();
    }
}
