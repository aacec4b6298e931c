package com.payments.api.merchants;

import com.payments.api.Merchant;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.UUID;

@ApplicationScoped
public class MerchantRepository {

    /** The ACTIVE merchant owning an unrevoked key with this SHA-256 hash, or null. */
    public Uni<Merchant> findByKeyHash(SqlClient client, byte[] keyHash) {
        return client.preparedQuery(
                        """
                        SELECT m.id, m.name, m.rate_limit_per_second
                          FROM merchant_api_keys k JOIN merchants m ON m.id = k.merchant_id
                         WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND m.status = 'ACTIVE'""")
                .execute(Tuple.of(io.vertx.core.buffer.Buffer.buffer(keyHash)))
                .map(rows -> rows.rowCount() == 0 ? null : from(rows.iterator().next()));
    }

    public Uni<Merchant> insert(SqlClient client, UUID id, String name, int rateLimitPerSecond) {
        return client.preparedQuery(
                        """
                        INSERT INTO merchants (id, name, rate_limit_per_second) VALUES ($1, $2, $3)
                        ON CONFLICT (id) DO NOTHING""")
                .execute(Tuple.of(id, name, rateLimitPerSecond))
                .replaceWith(new Merchant(id, name, rateLimitPerSecond));
    }

    public Uni<Boolean> exists(SqlClient client, UUID id) {
        return client.preparedQuery("SELECT 1 FROM merchants WHERE id = $1")
                .execute(Tuple.of(id))
                .map(rows -> rows.rowCount() == 1);
    }

    /** Stores a key's hash; a key that exists already (same hash) is left as it is. Returns the key id or null. */
    public Uni<UUID> insertKey(SqlClient client, UUID merchantId, byte[] keyHash, String prefix) {
        return client.preparedQuery(
                        """
                        INSERT INTO merchant_api_keys (merchant_id, key_hash, key_prefix) VALUES ($1, $2, $3)
                        ON CONFLICT (key_hash) DO NOTHING RETURNING id""")
                .execute(Tuple.of(merchantId, io.vertx.core.buffer.Buffer.buffer(keyHash), prefix))
                .map(rows ->
                        rows.rowCount() == 0 ? null : rows.iterator().next().getUUID("id"));
    }

    /** Revokes every key of the merchant except {@code keep}; returns how many. */
    public Uni<Integer> revokeOtherKeys(SqlClient client, UUID merchantId, UUID keep) {
        return client.preparedQuery(
                        """
                        UPDATE merchant_api_keys SET revoked_at = now()
                         WHERE merchant_id = $1 AND id <> $2 AND revoked_at IS NULL""")
                .execute(Tuple.of(merchantId, keep))
                .map(rows -> rows.rowCount());
    }

    static Merchant from(Row row) {
        return new Merchant(row.getUUID("id"), row.getString("name"), row.getInteger("rate_limit_per_second"));
    }
}
