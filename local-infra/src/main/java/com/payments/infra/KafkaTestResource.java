package com.payments.infra;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * The Kafka broker (see {@link Kafka}) with all topics deleted before each Quarkus application start.
 *
 * <p>Use it as {@code @WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)} on one
 * test class of the module (or on all of them: duplicates are removed); see {@link PostgresTestResource} for the scopes.
 */
public class KafkaTestResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        Kafka.deleteAllTopics();
        return Map.of("kafka.bootstrap.servers", Kafka.bootstrapServers());
    }

    @Override
    public void stop() {
        // The broker lives as long as the JVM.
    }
}
