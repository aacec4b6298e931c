package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Map;

/**
 * A free loopback port for the management interface (health, metrics, the operator API) of the application that a
 * {@code @QuarkusIntegrationTest} launches. The launcher learns only the HTTP port, from the application's
 * "Listening on" line, so a random management port ({@code quarkus.management.test-port=0}) could not be found. A test
 * field of type {@link Management} receives its URL.
 */
public class ManagementPortTestResource implements QuarkusTestResourceLifecycleManager {

    /** Where the launched application's management interface listens, e.g. {@code http://127.0.0.1:40123}. */
    public record Management(String url) {}

    private Management management;

    @Override
    public Map<String, String> start() {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        management = new Management("http://127.0.0.1:" + port);
        return Map.of("quarkus.management.port", Integer.toString(port), "quarkus.management.host", "127.0.0.1");
    }

    @Override
    public void inject(TestInjector testInjector) {
        testInjector.injectIntoFields(management, new TestInjector.MatchesType(Management.class));
    }

    @Override
    public void stop() {
        // nothing to stop: the application owns the port
    }
}
