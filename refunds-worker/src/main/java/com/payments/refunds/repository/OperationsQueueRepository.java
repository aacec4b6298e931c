package com.payments.refunds.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

/** Items for humans in {@code operations_queue}; at most one OPEN item per refund and reason. */
@ApplicationScoped
public class OperationsQueueRepository {

    /** Opens an item unless one is already open; true when this call opened it. */
    public Uni<Boolean> escalateRefund(SqlClient client, UUID refundId, String reason, JsonObject details) {
        return client.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                        VALUES ('refund', $1, $2, $3)
                        ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING""")
                .execute(Tuple.of(refundId.toString(), reason, details))
                .map(rows -> rows.rowCount() == 1);
    }
}
