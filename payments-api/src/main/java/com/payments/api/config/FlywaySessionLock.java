package com.payments.api.config;

import io.quarkus.flyway.FlywayConfigurationCustomizer;
import jakarta.inject.Singleton;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;

/**
 * The migration Job's Flyway holds its lock for the session, not in a transaction: CREATE INDEX CONCURRENTLY (V101)
 * waits for every transaction that started before it, Flyway's own lock transaction included, so with the
 * transactional lock (Flyway's default on PostgreSQL) it would wait forever. Every other runner of the migrations
 * does the same ({@code local-infra} Postgres.withSessionLock).
 */
@Singleton
public class FlywaySessionLock implements FlywayConfigurationCustomizer {
    @Override
    public void customize(FluentConfiguration configuration) {
        configuration
                .getPluginRegister()
                .getPlugin(PostgreSQLConfigurationExtension.class)
                .setTransactionalLock(false);
    }
}
