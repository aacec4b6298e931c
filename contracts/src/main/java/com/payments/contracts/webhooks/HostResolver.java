package com.payments.contracts.webhooks;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * The addresses of a merchant webhook URL's host, for the SSRF check of {@link WebhookUrlPolicy}: payments-api's at
 * registration, webhook-delivery's at send time (a changed DNS answer is checked too). The JVM resolver (hosts file,
 * DNS) blocks, so it runs on a worker thread; every address comes back, so every one can be checked. Its own bean so
 * that tests can answer for a name without any DNS traffic.
 */
@ApplicationScoped
public class HostResolver {
    private final Vertx vertx;

    public HostResolver(Vertx vertx) {
        this.vertx = vertx;
    }

    /**
     * Every address of {@code host} (an IP literal is its own, without a lookup). A name that does not resolve fails
     * with {@link UnknownHostException}, the one way an unknown host is reported (fakes in tests do the same).
     */
    public Uni<List<InetAddress>> resolve(String host) {
        return vertx.executeBlocking(() -> List.of(InetAddress.getAllByName(host)), false);
    }
}
