package com.payments.api.merchantwebhooks;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.util.List;

/**
 * The addresses of an endpoint URL's host, looked up on a worker thread (the system resolver blocks). Its own bean so
 * that tests can answer for a name without any DNS traffic.
 */
@ApplicationScoped
public class HostResolver {
    private final Vertx vertx;

    public HostResolver(Vertx vertx) {
        this.vertx = vertx;
    }

    /** Every address of {@code host} (an IP literal is its own, without a lookup); fails if the name does not resolve. */
    public Uni<List<InetAddress>> resolve(String host) {
        return vertx.executeBlocking(Uni.createFrom().item(() -> {
            try {
                return List.of(InetAddress.getAllByName(host));
            } catch (java.net.UnknownHostException e) {
                throw new UnresolvedHost();
            }
        }));
    }

    /** The host has no address. */
    public static final class UnresolvedHost extends RuntimeException {
        public UnresolvedHost() {
            super("unresolved host", null, false, false);
        }
    }
}
