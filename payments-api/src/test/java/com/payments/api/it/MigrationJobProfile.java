package com.payments.api.it;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.List;
import java.util.Map;

/** payments-api as the migration Job runs it (k8s/, local-stack.sh): migrate at start, then exit. */
public class MigrationJobProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("quarkus.init-and-exit", "true", "quarkus.flyway.migrate-at-start", "true");
    }

    /** An empty database: no schema, as a new installation's. */
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(
                PostgresTestResource.class, Map.of("prefix", "migration_job_it", "migrate", "false")));
    }

    @Override
    public boolean disableGlobalTestResources() {
        return true;
    }
}
