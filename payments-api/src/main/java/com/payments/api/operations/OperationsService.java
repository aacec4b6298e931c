package com.payments.api.operations;

import com.payments.api.common.OperationsRepository;
import com.payments.api.common.OperationsRepository.Item;
import com.payments.api.common.Refusal;
import com.payments.api.operations.OperatorAuditRepository.Entry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Resolving an operations item by hand, the one rule for the operator API and the console: only an OPEN item (not
 * found for none, a conflict when already resolved: the first note stays), and the audit row in the same transaction
 * as the change.
 */
@ApplicationScoped
public class OperationsService {
    private final Pool pool;
    private final OperationsRepository operations;
    private final OperatorAuditRepository audit;

    public OperationsService(Pool pool, OperationsRepository operations, OperatorAuditRepository audit) {
        this.pool = pool;
        this.operations = operations;
        this.audit = audit;
    }

    /** Resolves the OPEN item with this note, audited as {@code operator} on {@code channel}. */
    public Uni<Item> resolve(long itemId, String note, String operator, String channel, String client) {
        return pool.withTransaction(
                conn -> operations.resolve(conn, itemId, note).flatMap(resolved -> {
                    if (resolved == null) {
                        return operations.find(conn, itemId).map(existing -> {
                            if (existing == null) {
                                throw Refusal.notFound();
                            }
                            throw new Refusal(
                                    Refusal.Kind.CONFLICT,
                                    "operations_item_resolved",
                                    "Already resolved",
                                    "This operations item is already resolved",
                                    null);
                        });
                    }
                    return audit.record(
                                    conn,
                                    new Entry(
                                            operator,
                                            channel,
                                            "resolve_operations_item",
                                            "operations_item:" + itemId,
                                            note,
                                            client))
                            .replaceWith(resolved);
                }));
    }
}
