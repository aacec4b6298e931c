package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.HashMap;
import java.util.Map;

/**
 * A real psp-sandbox process per Quarkus application start; returns {@code psp.url}. Init args are passed to the
 * sandbox as properties, e.g. {@code @ResourceArg(name = "psp.timeout-delay", value = "2s")}.
 *
 * <p>A test field of type {@link PspSandbox} receives the sandbox (also in a {@code @QuarkusIntegrationTest}).
 *
 * <p>The module that uses it declares {@code com.payments:psp-sandbox} as a test dependency of type {@code pom} with
 * all exclusions, so that the reactor packages the sandbox first without putting it on the classpath.
 */
public class PspSandboxTestResource implements QuarkusTestResourceLifecycleManager {
    private final Map<String, String> properties = new HashMap<>();
    private PspSandbox sandbox;

    @Override
    public void init(Map<String, String> initArgs) {
        properties.putAll(initArgs);
    }

    @Override
    public Map<String, String> start() {
        sandbox = PspSandbox.start(properties);
        return Map.of("psp.url", sandbox.url());
    }

    @Override
    public void inject(TestInjector testInjector) {
        testInjector.injectIntoFields(sandbox, new TestInjector.MatchesType(PspSandbox.class));
    }

    @Override
    public void stop() {
        if (sandbox != null) {
            sandbox.stop();
        }
    }
}
