package com.payments.relay.health;

import com.payments.relay.service.RelayService;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready while the relay's last round worked: the database answers and, on the publishing replica, the broker
 * acknowledges. Not ready while it backs off. Liveness does not depend on either: the process keeps retrying.
 */
@Readiness
@ApplicationScoped
public class RelayReadinessCheck implements HealthCheck {
    private final RelayService relay;

    RelayReadinessCheck(RelayService relay) {
        this.relay = relay;
    }

    @Override
    public HealthCheckResponse call() {
        String problem = relay.problem();
        var builder = HealthCheckResponse.named("outbox-relay").withData("publisher", relay.isLeader());
        return problem == null
                ? builder.up().build()
                : builder.down().withData("problem", problem).build();
    }
}
