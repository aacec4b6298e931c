package com.payments.contracts;

import io.quarkus.runtime.StartupEvent;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refuses to start a service on a schema older than the migrations it was built with. Migrations are applied by
 * their one owner (the migration Job, see docs/operations.md); every service only checks.
 */
@ApplicationScoped
public class SchemaVersion {
    /** Highest migration version in {@code db/migration}; SchemaVersionTest keeps it in step with the files. */
    public static final int REQUIRED = 107;

    private final Pool pool;
    private final boolean enabled;

    SchemaVersion(
            Pool pool, @ConfigProperty(name = "payments.schema.check.enabled", defaultValue = "true") boolean enabled) {
        this.pool = pool;
        this.enabled = enabled;
    }

    void onStart(@Observes StartupEvent event) {
        if (!enabled) {
            return;
        }
        // Startup runs on the main thread, not the event loop: waiting here is allowed.
        int applied = pool.query("SELECT version FROM flyway_schema_history WHERE success AND version IS NOT NULL")
                .execute()
                .map(rows -> {
                    int max = 0;
                    for (Row row : rows) {
                        max = Math.max(max, Integer.parseInt(row.getString(0)));
                    }
                    return max;
                })
                .onFailure()
                .transform(
                        e -> new IllegalStateException("Cannot read the schema version (is the schema migrated?)", e))
                .await()
                .atMost(Duration.ofSeconds(30));
        if (applied < REQUIRED) {
            throw new IllegalStateException("Database schema is at version " + applied + " but this build needs "
                    + REQUIRED + ": run the migration Job first");
        }
    }
}
