package com.payments.api.it;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/** payments-api as the migration Job runs it (k8s/, local-stack.sh): migrate at start, then exit. */
public class MigrationJobProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("quarkus.init-and-exit", "true", "quarkus.flyway.migrate-at-start", "true");
    }

    @Override
    public boolean disableGlobalTestResources() {
        return true;
    }
}
