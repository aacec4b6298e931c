package com.payments.api.merchants;

import com.payments.api.Merchant;
import com.payments.api.common.Refusal;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.UUID;

/** Operators create merchants and issue or rotate API keys; a key is shown once, only its hash is stored. */
@ApplicationScoped
public class MerchantAdminService {

    /** A new key in clear text (shown once). */
    public record IssuedKey(UUID merchantId, UUID keyId, String apiKey, int revokedKeys) {}

    private final Pool pool;
    private final MerchantRepository merchants;
    private final MerchantAuthService auth;

    public MerchantAdminService(Pool pool, MerchantRepository merchants, MerchantAuthService auth) {
        this.pool = pool;
        this.merchants = merchants;
        this.auth = auth;
    }

    public Uni<IssuedKey> createMerchant(String name, int rateLimitPerSecond) {
        UUID id = UUID.randomUUID();
        String apiKey = newKey();
        byte[] hash = MerchantAuthService.hash(apiKey);
        return pool.withTransaction(conn -> merchants
                        .insert(conn, id, name, rateLimitPerSecond)
                        .flatMap(m -> merchants.insertKey(conn, id, hash, prefix(apiKey)))
                        .map(keyId -> new IssuedKey(id, keyId, apiKey, 0)))
                .invoke(() -> auth.issued(hash));
    }

    /** Issues a new key; with {@code revokeOthers} every other key of the merchant stops working. */
    public Uni<IssuedKey> issueKey(UUID merchantId, boolean revokeOthers) {
        String apiKey = newKey();
        byte[] hash = MerchantAuthService.hash(apiKey);
        return pool.withTransaction(conn -> merchants.exists(conn, merchantId).flatMap(exists -> {
                    if (!exists) {
                        return Uni.createFrom().failure(Refusal.notFound());
                    }
                    return merchants
                            .insertKey(conn, merchantId, hash, prefix(apiKey))
                            .flatMap(keyId -> (revokeOthers
                                            ? merchants.revokeOtherKeys(conn, merchantId, keyId)
                                            : Uni.createFrom().item(0))
                                    .map(revoked -> new IssuedKey(merchantId, keyId, apiKey, revoked)));
                }))
                .invoke(issued -> {
                    auth.issued(hash);
                    auth.invalidate(merchantId);
                });
    }

    /** Creates a merchant with a fixed id and key unless it exists (demo merchants). */
    public Uni<Merchant> ensureMerchant(UUID id, String name, int rateLimitPerSecond, String apiKey) {
        byte[] hash = MerchantAuthService.hash(apiKey);
        return pool.withTransaction(conn -> merchants
                        .insert(conn, id, name, rateLimitPerSecond)
                        .call(m -> merchants.insertKey(conn, id, hash, prefix(apiKey))))
                .invoke(() -> auth.issued(hash));
    }

    static String newKey() {
        byte[] bytes = new byte[32];
        // No static SecureRandom: the native build initializes this class at build time and refuses a seeded
        // generator in the image. A new instance is cheap: it draws from the operating system's (NativePRNG).
        new SecureRandom().nextBytes(bytes);
        return "sk_live_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String prefix(String apiKey) {
        return apiKey.substring(0, Math.min(12, apiKey.length()));
    }
}
