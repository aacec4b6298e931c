package com.payments.api.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** The double-entry ledger (docs/operations.md): append-only, each transaction sums to zero per currency. */
@ApplicationScoped
public class LedgerRepository {

    /** Capture: psp_receivable +amount, merchant_payable -amount, as one transaction booked once per payment. */
    public Uni<Void> bookCapture(SqlClient client, UUID merchantId, UUID paymentId, long amount, String currency) {
        return client.preparedQuery(
                        """
                        WITH t AS (
                            INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
                            VALUES ('CAPTURE', $1, $2, 'payment captured') RETURNING id)
                        INSERT INTO ledger_entries (transaction_id, account, amount, currency)
                        SELECT t.id, e.account, e.amount, $4
                          FROM t, (VALUES ('psp_receivable', $3::bigint), ('merchant_payable', -$3::bigint))
                               AS e (account, amount)""")
                .execute(Tuple.of(paymentId.toString(), merchantId, amount, currency))
                .replaceWithVoid();
    }
}
