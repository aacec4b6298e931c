package com.payments.api.repository;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** Items for humans in operations_queue: at most one OPEN item per subject and reason (unique index of V1). */
@ApplicationScoped
public class OperationsRepository {

    /** Opens an item unless one is already open for this subject and reason; true when this call opened it. */
    public Uni<Boolean> open(
            SqlClient client, String subjectType, String subjectId, String reason, String detailsJson) {
        return client.preparedQuery(
                        """
                        INSERT INTO operations_queue (subject_type, subject_id, reason, details)
                        VALUES ($1, $2, $3, $4::text::jsonb)
                        ON CONFLICT (subject_type, subject_id, reason) WHERE status = 'OPEN' DO NOTHING""")
                .execute(Tuple.of(subjectType, subjectId, reason, detailsJson))
                .map(rows -> rows.rowCount() == 1);
    }

    /**
     * Resolves the open item for this subject and reason, if there is one, noting what answered it in its details;
     * true when there was one.
     */
    public Uni<Boolean> resolve(
            SqlClient client, String subjectType, String subjectId, String reason, String resolution) {
        return client.preparedQuery(
                        """
                        UPDATE operations_queue
                           SET status = 'RESOLVED', resolved_at = now(),
                               details = details || jsonb_build_object('resolution', $4::text)
                         WHERE subject_type = $1 AND subject_id = $2 AND reason = $3 AND status = 'OPEN'""")
                .execute(Tuple.of(subjectType, subjectId, reason, resolution))
                .map(rows -> rows.rowCount() == 1);
    }
}
