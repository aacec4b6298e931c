package com.payments.relay.service;

import com.payments.relay.config.RelayConfig;
import com.payments.relay.config.RelayPoolCreator;
import com.payments.relay.messaging.KafkaPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.quarkus.logging.Log;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** Starts this replica's {@link RelayWorker} with the application and stops it (after its round) on shutdown. */
@ApplicationScoped
public class RelayService {
    private final RelayConfig config;
    private final Vertx vertx;
    private final Pool pool;
    private final RelayMetrics metrics;
    private final Map<String, Object> kafka;
    private final PgConnectOptions connectOptions;
    private final OpenTelemetry openTelemetry;
    private KafkaPublisher publisher;
    private RelayWorker worker;

    RelayService(
            RelayConfig config,
            Vertx vertx,
            Pool pool,
            MeterRegistry registry,
            OpenTelemetry openTelemetry,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            @ConfigProperty(name = "quarkus.datasource.reactive.url") String url,
            @ConfigProperty(name = "quarkus.datasource.username") Optional<String> user,
            @ConfigProperty(name = "quarkus.datasource.password") Optional<String> password) {
        this.config = config;
        this.vertx = vertx;
        this.openTelemetry = openTelemetry;
        this.pool = pool;
        this.metrics = new RelayMetrics(registry);
        this.kafka = kafka;
        this.connectOptions = connectOptions(url, user, password, config.keepalive());
    }

    /**
     * Options of the control connection, from the same settings as the application's pool. Its statements (the read of
     * each batch, the fence and the last look of each wake-up) are prepared once, not parsed and planned each time.
     */
    public static PgConnectOptions connectOptions(
            String url, Optional<String> user, Optional<String> password, RelayConfig.Keepalive keepalive) {
        PgConnectOptions options =
                PgConnectOptions.fromUri(url.startsWith("vertx-reactive:") ? url.substring(15) : url);
        user.ifPresent(options::setUser);
        password.ifPresent(options::setPassword);
        options.setCachePreparedStatements(true);
        return RelayPoolCreator.withKeepalive(options, keepalive);
    }

    void onStart(@Observes StartupEvent event) {
        if (!config.enabled()) {
            Log.info("outbox-relay disabled (relay.enabled=false)");
            return;
        }
        publisher = new KafkaPublisher(kafka, config.producer(), openTelemetry);
        worker = new RelayWorker("main", vertx, connectOptions, pool, publisher, config, metrics);
        worker.start();
    }

    void onStop(@Observes ShutdownEvent event) {
        if (worker != null) {
            worker.stop();
        }
        if (publisher != null) {
            publisher.close();
        }
    }

    /** Null when healthy or disabled; otherwise why this replica cannot do its work. */
    public String problem() {
        return worker == null ? null : worker.problem();
    }

    public boolean isLeader() {
        return worker != null && worker.isLeader();
    }

    public RelayMetrics metrics() {
        return metrics;
    }
}
