package com.payments.api.operations;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** operator_audit (V82): who did what, when, with which note. Append-only (triggers). */
@ApplicationScoped
public class OperatorAuditRepository {

    /** One operator action; {@code subject}, {@code note} and {@code client} may be null. */
    public record Entry(String operator, String channel, String action, String subject, String note, String client) {}

    public Uni<Void> record(SqlClient client, Entry entry) {
        return client.preparedQuery(
                        """
                        INSERT INTO operator_audit (operator, channel, action, subject, note, client)
                        VALUES ($1, $2, $3, $4, $5, $6)""")
                .execute(Tuple.from(new Object[] {
                    entry.operator(), entry.channel(), entry.action(), entry.subject(), entry.note(), entry.client()
                }))
                .replaceWithVoid();
    }
}
