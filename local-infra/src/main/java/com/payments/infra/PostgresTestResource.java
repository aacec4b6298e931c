package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * A fresh, migrated database for each Quarkus application start (see {@link Postgres}).
 *
 * <p>Use it as {@code @QuarkusTestResource(PostgresTestResource.class)} on one test class of the
 * module (or on all of them: duplicates are removed). Without {@code restrictToAnnotatedClass} the
 * resource is global, so every {@code @QuarkusTest} of the module shares one application start.
 * {@code @WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)}
 * is the equivalent; the Quarkus 3.33 Javadoc of {@code @WithTestResource} still advises
 * {@code @QuarkusTestResource}, and its default scope ({@code MATCHING_RESOURCES}) restarts the
 * application for test classes that do not carry the same annotations.
 *
 * <p>Init arg {@code prefix} (default {@code test}) starts the database name; {@code migrate=false} leaves the database
 * empty (the migration Job's starting point). A test field of type {@link Postgres.Database} receives the database,
 * also in a {@code @QuarkusIntegrationTest}, where the application runs in another process.
 */
public class PostgresTestResource implements QuarkusTestResourceLifecycleManager {

    private String prefix = "test";
    private boolean migrate = true;
    private Postgres.Database database;

    @Override
    public void init(Map<String, String> initArgs) {
        prefix = initArgs.getOrDefault("prefix", prefix);
        migrate = Boolean.parseBoolean(initArgs.getOrDefault("migrate", "true"));
    }

    @Override
    public Map<String, String> start() {
        database = migrate ? Postgres.freshDatabase(prefix) : Postgres.emptyDatabase(prefix);
        return Map.of(
                "quarkus.datasource.reactive.url", database.reactiveUrl(),
                "quarkus.datasource.jdbc.url", database.jdbcUrl(),
                "quarkus.datasource.username", database.user(),
                "quarkus.datasource.password", database.password());
    }

    @Override
    public void inject(TestInjector testInjector) {
        testInjector.injectIntoFields(database, new TestInjector.MatchesType(Postgres.Database.class));
    }

    @Override
    public void stop() {
        // The server lives as long as the JVM; the database is left for inspection.
    }
}
