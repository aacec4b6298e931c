package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
 * Postgres#APP_ROLE}, as in production). Init arg {@code migrate=false} leaves the database empty (the migration
 * Job's starting point). Init arg {@code keep=NAME} gives every start with that name the same database (a
 * {@code QuarkusMainLauncher} restarts the resources at each launch). A test field of type {@link Postgres.Database} receives the database as its owner, also in a
 * {@code @QuarkusIntegrationTest}, where the application runs in another process.
 */
public class PostgresTestResource implements QuarkusTestResourceLifecycleManager {

    /** Databases kept across application starts by init arg {@code keep} (QuarkusMainLauncher restarts resources). */
    private static final Map<String, Postgres.Database> KEPT = new ConcurrentHashMap<>();

    private String prefix = "test";
    private String keep;
    private boolean asApp;
    private boolean migrate = true;
    private Postgres.Database database;

    @Override
    public void init(Map<String, String> initArgs) {
        prefix = initArgs.getOrDefault("prefix", prefix);
        String login = initArgs.getOrDefault("login", "owner");
        if (!login.equals("owner") && !login.equals("app")) {
            throw new IllegalArgumentException("login must be owner or app, not " + login);
        }
        asApp = login.equals("app");
        migrate = Boolean.parseBoolean(initArgs.getOrDefault("migrate", "true"));
        keep = initArgs.get("keep");
    }

    @Override
    public Map<String, String> start() {
        database = keep == null ? create() : KEPT.computeIfAbsent(keep, k -> create());
        Postgres.Database login = asApp ? database.asApp() : database;
        return Map.of(
                "quarkus.datasource.reactive.url", login.reactiveUrl(),
                "quarkus.datasource.jdbc.url", login.jdbcUrl(),
                "quarkus.datasource.username", login.user(),
                "quarkus.datasource.password", login.password());
    }

    private Postgres.Database create() {
        return migrate ? Postgres.freshDatabase(prefix) : Postgres.emptyDatabase(prefix);
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
