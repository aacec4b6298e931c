package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * A fresh, migrated database for each Quarkus application start (see {@link Postgres}).
 *
 * <p>Use it as {@code @WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)} on one
 * test class of the module (or on all of them: duplicates are removed). {@code GLOBAL} applies the resource to every
 * {@code @QuarkusTest} of the module, so they share one application start; the default scope
 * ({@code MATCHING_RESOURCES}) would restart the application for test classes that do not carry the same annotations,
 * and {@code RESTRICTED_TO_CLASS} gives a class an application start of its own.
 *
 * <p>Init arg {@code prefix} (default {@code test}) starts the database name. Init arg {@code login}: {@code owner}
 * (default: the server's user, who also migrated the database) or {@code app} (the services' role {@value
 * Postgres#APP_ROLE}, as in production).
 */
public class PostgresTestResource implements QuarkusTestResourceLifecycleManager {

    private String prefix = "test";
    private boolean asApp;

    @Override
    public void init(Map<String, String> initArgs) {
        prefix = initArgs.getOrDefault("prefix", prefix);
        String login = initArgs.getOrDefault("login", "owner");
        if (!login.equals("owner") && !login.equals("app")) {
            throw new IllegalArgumentException("login must be owner or app, not " + login);
        }
        asApp = login.equals("app");
    }

    @Override
    public Map<String, String> start() {
        Postgres.Database migrated = Postgres.freshDatabase(prefix);
        Postgres.Database database = asApp ? migrated.asApp() : migrated;
        return Map.of(
                "quarkus.datasource.reactive.url", database.reactiveUrl(),
                "quarkus.datasource.jdbc.url", database.jdbcUrl(),
                "quarkus.datasource.username", database.user(),
                "quarkus.datasource.password", database.password());
    }

    @Override
    public void stop() {
        // The server lives as long as the JVM; the database is left for inspection.
    }
}
