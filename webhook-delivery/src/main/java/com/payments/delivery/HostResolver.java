package com.payments.delivery;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.util.List;

/**
 * The addresses of an endpoint URL's host at send time: the JVM resolver (hosts file, DNS) on a worker thread, since
 * it blocks; every address comes back, so every one can be checked. Its own bean so that tests can answer for a name
 * without any DNS traffic (payments-api has the same seam for its registration-time check).
 */
@ApplicationScoped
public class HostResolver {
    private final Vertx vertx;

    public HostResolver(Vertx vertx) {
        this.vertx = vertx;
    }

    /**
     * Every address of {@code host} (an IP literal is its own, without a lookup); fails with
     * {@link java.net.UnknownHostException} if the name does not resolve.
     */
    public Uni<List<InetAddress>> resolve(String host) {
        return vertx.executeBlocking(() -> List.of(InetAddress.getAllByName(host)), false);
    }
}
