package com.payments.api.merchantwebhooks;

import com.payments.api.merchantwebhooks.WebhookEndpointRepository.StoredSecret;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import com.payments.contracts.webhooks.WebhookSecretCipher.UnreadableSecret;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Seals the webhook signing secrets still in plaintext (written before V94, or by the previous release during a
 * rolling upgrade) and re-encrypts those under a key that is no longer the current one of {@code WEBHOOK_SECRETS_KEYS}
 * (a key rotation; docs/deployment.md "Webhook secrets key"), soon after start-up and every 10 minutes. Safe on many
 * replicas: each batch is locked with SKIP LOCKED and rewritten in its own transaction. A row that cannot be opened
 * (its key is not configured, or it was altered) is left as it is and logged: webhook-delivery sends nothing to its
 * endpoint while it is unexpired (fail closed).
 */
@ApplicationScoped
public class WebhookSecretSealingJob {
    static final int BATCH = 100;
    private static final UUID FIRST = new UUID(0, 0);

    private final Pool pool;
    private final WebhookEndpointRepository endpoints;
    private final WebhookSecretCipher cipher;

    public WebhookSecretSealingJob(Pool pool, WebhookEndpointRepository endpoints, WebhookSecretCipher cipher) {
        this.pool = pool;
        this.endpoints = endpoints;
        this.cipher = cipher;
    }

    /** Says at start-up which key seals, or that none does and webhook endpoints cannot be created or rotated. */
    void onStart(@Observes StartupEvent event) {
        if (cipher.configured()) {
            Log.debugf("Webhook secrets are sealed under key id %s", cipher.currentKeyId());
        } else {
            Log.errorf(
                    "%s; until it is, creating or rotating a webhook endpoint answers 503 and no secret is sealed",
                    WebhookSecretCipher.NOT_CONFIGURED);
        }
    }

    /** What one run did: rows sealed under the current key, rows that could not be opened. */
    public record Sealing(int sealed, int unreadable) {}

    @Scheduled(
            every = "${payments.webhooks.seal-every:10m}",
            delayed = "5s",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> run() {
        if (!cipher.configured()) {
            return Uni.createFrom().voidItem();
        }
        return sealAll()
                .invoke(done -> {
                    if (done.sealed() > 0) {
                        Log.infof(
                                "Sealed %d webhook signing secrets under key id %s",
                                done.sealed(), cipher.currentKeyId());
                    }
                })
                .replaceWithVoid();
    }

    /** Seals every row not yet under the current key, batch by batch in id order. */
    public Uni<Sealing> sealAll() {
        return next(FIRST, new Sealing(0, 0));
    }

    private Uni<Sealing> next(UUID after, Sealing total) {
        return pool.withTransaction(conn -> endpoints
                        .lockUnsealed(conn, cipher.currentKeyId(), after, BATCH)
                        .flatMap(rows -> {
                            List<UUID> ids = new ArrayList<>();
                            List<WebhookSecretCipher.Sealed> sealed = new ArrayList<>();
                            int unreadable = 0;
                            for (StoredSecret row : rows) {
                                try {
                                    String secret = row.plaintext() != null
                                            ? row.plaintext()
                                            : cipher.open(row.endpointId(), row.id(), row.keyId(), row.ciphertext());
                                    sealed.add(cipher.seal(row.endpointId(), row.id(), secret));
                                    ids.add(row.id());
                                } catch (UnreadableSecret e) {
                                    unreadable++;
                                    Log.errorf(
                                            "Webhook signing secret %s of endpoint %s cannot be decrypted (%s): no"
                                                    + " delivery to the endpoint is sent while it is unexpired"
                                                    + " (docs/deployment.md, \"Webhook secrets key\")",
                                            row.id(), row.endpointId(), e.getMessage());
                                }
                            }
                            UUID last = rows.isEmpty()
                                    ? null
                                    : rows.get(rows.size() - 1).id();
                            Sealing sum = new Sealing(total.sealed() + ids.size(), total.unreadable() + unreadable);
                            Uni<Integer> written =
                                    ids.isEmpty() ? Uni.createFrom().item(0) : endpoints.reseal(conn, ids, sealed);
                            return written.map(n -> new Batch(rows.size(), last, sum));
                        }))
                .flatMap(batch -> batch.size() < BATCH
                        ? Uni.createFrom().item(batch.total())
                        : next(batch.last(), batch.total()));
    }

    private record Batch(int size, UUID last, Sealing total) {}
}
