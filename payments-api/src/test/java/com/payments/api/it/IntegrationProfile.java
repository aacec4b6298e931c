package com.payments.api.it;

import com.payments.infra.ManagementPortTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.infra.QuarkusProcess;
import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.List;
import java.util.Map;

/**
 * The packaged application as production runs it (prod profile, no demo merchants, logged in as the application role,
 * the operator API only on the management port), given only what a deployment gives it: the operator token, the
 * webhook secret, the keys of merchants' webhook signing secrets at rest and a PSP timeout shorter than the sandbox's lost-answer delay. The
 * resolver stays off so that a test decides when a payment leaves UNKNOWN. The modules' global test resources (for
 * the {@code @QuarkusTest} classes) are left out: the suite's resources are the ones below (with
 * {@code disableGlobalTestResources} only a profile's own resources start).
 */
public class IntegrationProfile implements QuarkusTestProfile {
    static final String ADMIN_TOKEN = "it-operator-token";
    static final String WEBHOOK_SECRET = "whsec_it_secret";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "payments.admin.token",
                ADMIN_TOKEN,
                "payments.webhooks.secret",
                WEBHOOK_SECRET,
                "webhook.secrets.keys",
                QuarkusProcess.TEST_WEBHOOK_SECRETS_KEYS,
                "payments.admin.management-only",
                "true",
                "payments.resolver.every",
                "off",
                "quarkus.fault-tolerance.\"com.payments.api.client.PspGateway/charge\".timeout.value",
                "6000");
    }

    /**
     * A fresh migrated database that the service uses as the application role, a sandbox that answers
     * tok_timeoutCaptured after 15 s (past the 6 s timeout; a loaded machine took over 4 s for a plain charge), and a
     * known management port.
     */
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(
                new TestResourceEntry(PostgresTestResource.class, Map.of("prefix", "api_it", "login", "app")),
                new TestResourceEntry(ManagementPortTestResource.class),
                new TestResourceEntry(PspSandboxTestResource.class, Map.of("psp.timeout-delay", "15s")));
    }

    @Override
    public boolean disableGlobalTestResources() {
        return true;
    }
}
