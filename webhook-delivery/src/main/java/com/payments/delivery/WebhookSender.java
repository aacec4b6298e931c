package com.payments.delivery;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.contracts.webhooks.HostResolver;
import com.payments.contracts.webhooks.WebhookSecretCipher;
import com.payments.contracts.webhooks.WebhookSecretCipher.UnreadableSecret;
import com.payments.contracts.webhooks.WebhookUrlPolicy;
import com.payments.delivery.DeliveryRepository.Attempt;
import com.payments.delivery.DeliveryRepository.Lease;
import com.payments.delivery.DeliveryRepository.Outcome;
import com.payments.delivery.DeliveryRepository.StoredSecret;
import com.payments.delivery.DeliveryRepository.Success;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.tls.TlsConfiguration;
import io.quarkus.tls.TlsConfigurationRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.http.HttpClient;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends due deliveries (docs/webhook-delivery.md): every {@code poll-interval}, and whenever an attempt ends, it
 * leases as many as it has room for, at most {@code per-endpoint-concurrency} in flight per endpoint and {@code max-in-flight} in all, so a slow or dead
 * endpoint holds its own slots and no one else's. Each attempt resolves the URL's host off the event loop, checks
 * every address with {@link WebhookUrlPolicy}, and connects to the checked address (the Host header and TLS SNI stay
 * the URL's host), so a DNS answer cannot steer a delivery into our network. Redirects are not followed. {@link #stop}
 * (the service's graceful stop, {@link DeliveryDrain}) leases nothing more and waits for the attempts in hand.
 */
@ApplicationScoped
public class WebhookSender {

    private final Vertx vertx;
    private final DeliveryRepository repository;
    private final DeliveryMetrics metrics;
    private final ObjectMapper mapper;
    private final WebhooksConfig config;
    private final TlsConfigurationRegistry tlsRegistry;
    private final WebhookUrlPolicy policy;
    private final RetrySchedule schedule;
    private final HostResolver resolver;
    private final WebhookSecretCipher cipher;
    /** Successful attempts are written many per statement: one commit for all that finished meanwhile. */
    private final StatementBatcher<Success, Boolean> successes;

    private final Map<UUID, Integer> inFlight = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicBoolean leasing = new AtomicBoolean();
    private volatile boolean leaseAgain;
    /** Set by {@link #stop}; completes once no lease statement runs and no attempt is in flight. */
    private volatile CompletableFuture<Void> drained;

    private final AtomicInteger givenBack = new AtomicInteger();
    private HttpClient client;
    private long timer = -1;

    public WebhookSender(
            Vertx vertx,
            DeliveryRepository repository,
            DeliveryMetrics metrics,
            ObjectMapper mapper,
            WebhooksConfig config,
            TlsConfigurationRegistry tlsRegistry,
            HostResolver resolver,
            WebhookSecretCipher cipher) {
        this.vertx = vertx;
        this.cipher = cipher;
        this.resolver = resolver;
        this.repository = repository;
        this.metrics = metrics;
        this.mapper = mapper;
        this.config = config;
        this.tlsRegistry = tlsRegistry;
        this.policy = config.urlPolicy();
        this.schedule = new RetrySchedule(config.schedule(), config.giveUpAfter(), new SecureRandom()::nextDouble);
        this.successes = new StatementBatcher<>(repository::recordSucceeded, 500, 2, size -> {});
        if (config.lease().compareTo(config.timeout()) <= 0) {
            throw new IllegalStateException("payments.webhooks.lease must be longer than payments.webhooks.timeout");
        }
    }

    void onStart(@Observes StartupEvent event) {
        if (!cipher.configured()) {
            // signing is all this service does: without the key it would only fail every delivery until it gives up
            throw new IllegalStateException(WebhookSecretCipher.NOT_CONFIGURED);
        }
        // https: the certificate is verified against the URL's host (Vert.x's default, verify-host on), which is
        // also the SNI name, although the connection goes to the checked address (RequestOptions.setServer).
        HttpClientOptions options = new HttpClientOptions()
                // Connections per host: as many as attempts may be in flight. The lease bounds each endpoint; a pool
                // per host as small would make endpoints of one host (hosted receivers) wait for each other's.
                .setMaxPoolSize(config.maxInFlight())
                .setConnectTimeout((int) config.timeout().toMillis())
                .setForceSni(true)
                .setKeepAlive(true);
        config.tlsConfigurationName().ifPresent(name -> {
            TlsConfiguration tls = tlsRegistry
                    .get(name)
                    .orElseThrow(() -> new IllegalStateException(
                            "payments.webhooks.tls-configuration-name: no TLS configuration named " + name));
            if (tls.isTrustAll()) {
                throw new IllegalStateException("payments.webhooks.tls-configuration-name: " + name
                        + " trusts all certificates, which webhooks to merchants must not");
            }
            options.setTrustOptions(tls.getTrustStoreOptions());
        });
        client = vertx.createHttpClient(options);
        timer = vertx.setPeriodic(config.pollInterval().toMillis(), id -> lease());
    }

    /**
     * Leases nothing more. An attempt whose request is not sent yet sends nothing and gives its delivery back (due at
     * once, for another sender); one already sent waits for its answer and writes its outcome as usual. The returned
     * stage completes once no attempt is in flight any more, every outcome written.
     */
    CompletionStage<Void> stop() {
        synchronized (this) {
            if (drained == null) {
                drained = new CompletableFuture<>();
            }
        }
        vertx.cancelTimer(timer);
        completeIfDrained();
        return drained;
    }

    /** Attempts in flight on this instance (tests, metrics). */
    int inFlight() {
        return total.get();
    }

    /** Deliveries given back unsent since {@link #stop}. */
    int givenBack() {
        return givenBack.get();
    }

    private void completeIfDrained() {
        CompletableFuture<Void> stopped = drained;
        if (stopped != null && !leasing.get() && total.get() == 0) {
            stopped.complete(null);
        }
    }

    /**
     * Leases due deliveries into the free slots; one lease query at a time. Asked for while one runs (a slot freed),
     * it runs again right after, and again while leases come back non-empty, so under a backlog the slots refill as
     * fast as attempts finish, each query taking every slot freed meanwhile; when nothing is due it waits for the
     * next {@code poll-interval} tick or a finished attempt.
     */
    private void lease() {
        if (!leasing.compareAndSet(false, true)) {
            leaseAgain = true;
            return;
        }
        leaseAgain = false;
        if (drained != null) {
            leasing.set(false);
            completeIfDrained();
            return;
        }
        int room = config.maxInFlight() - total.get();
        if (room <= 0) {
            leasing.set(false);
            return;
        }
        repository
                .lease(Map.copyOf(inFlight), config.perEndpointConcurrency(), room, config.lease())
                .subscribe()
                .with(
                        leases -> {
                            // after a stop too: each is given back unsent (send), counted in flight until then
                            leases.forEach(this::start);
                            leasing.set(false);
                            completeIfDrained();
                            if (!leases.isEmpty() || leaseAgain) {
                                lease();
                            }
                        },
                        e -> {
                            leasing.set(false);
                            completeIfDrained();
                            Log.warnf("Leasing due webhook deliveries failed: %s", e.getMessage());
                        });
    }

    private void start(Lease lease) {
        inFlight.merge(lease.endpointId(), 1, Integer::sum);
        total.incrementAndGet();
        deliver(lease)
                .onTermination()
                .invoke(() -> {
                    inFlight.computeIfPresent(lease.endpointId(), (id, n) -> n == 1 ? null : n - 1);
                    total.decrementAndGet();
                    lease();
                    completeIfDrained();
                })
                .subscribe()
                .with(
                        ignored -> {},
                        e -> Log.warnf(
                                "Delivery %s: outcome not written (%s); it is tried again when its lease ends",
                                lease.id(), e.getMessage()));
    }

    private Uni<Void> deliver(Lease lease) {
        if (!"ENABLED".equals(lease.endpointStatus()) || lease.event() == null) {
            return repository
                    .close(lease)
                    .invoke(closed -> {
                        if (closed) {
                            metrics.notSent();
                        }
                    })
                    .replaceWithVoid();
        }
        Instant startedAt = Instant.now();
        long start = System.nanoTime();
        return attempt(lease)
                .onFailure()
                .recoverWithItem(e -> Result.failed(null, describe(e)))
                .flatMap(result -> {
                    if (result == Result.STOPPING) {
                        return repository
                                .giveBack(lease)
                                .invoke(back -> {
                                    if (back) {
                                        givenBack.incrementAndGet();
                                    }
                                })
                                .replaceWithVoid();
                    }
                    Duration latency = Duration.ofNanos(System.nanoTime() - start);
                    Attempt attempt = new Attempt(
                            startedAt, latency.toMillis(), result.status(), result.succeeded(), result.error());
                    Instant next = result.succeeded()
                            ? null
                            : schedule.next(lease.createdAt(), lease.attempts() + 1, Instant.now())
                                    .orElse(null);
                    Uni<Outcome> written = result.succeeded()
                            ? successes
                                    .submit(new Success(lease, attempt))
                                    .map(current -> current ? Outcome.SUCCEEDED : Outcome.STALE)
                            : repository.record(lease, attempt, next, config.disableAfter());
                    return written.invoke(outcome -> count(lease, outcome, latency))
                            .replaceWithVoid();
                });
    }

    private void count(Lease lease, Outcome outcome, Duration latency) {
        switch (outcome) {
            case SUCCEEDED -> metrics.attempt("succeeded", latency);
            case RETRY -> metrics.attempt("retry", latency);
            case FAILED -> metrics.attempt("failed", latency);
            case RETRY_ENDPOINT_DISABLED, FAILED_ENDPOINT_DISABLED -> {
                metrics.attempt(outcome == Outcome.RETRY_ENDPOINT_DISABLED ? "retry" : "failed", latency);
                metrics.endpointDisabled();
                Log.warnf(
                        "Webhook endpoint %s DISABLED: failing for over %s", lease.endpointId(), config.disableAfter());
            }
            case STALE ->
                Log.infof("Delivery %s: lease ended before its outcome; the new lease's sender decides", lease.id());
        }
    }

    /** One attempt: URL and address checks, then the request; a failed Uni is an attempt without an answer. */
    private Uni<Result> attempt(Lease lease) {
        Optional<String> badUrl = policy.checkUrl(lease.url());
        if (badUrl.isPresent()) {
            return Uni.createFrom().item(Result.failed(null, "not sent: " + badUrl.get()));
        }
        if (lease.secrets().isEmpty()) {
            return Uni.createFrom().item(Result.failed(null, "not sent: the endpoint has no signing secret"));
        }
        List<String> secrets;
        try {
            secrets = lease.secrets().stream().map(s -> open(lease, s)).toList();
        } catch (UnreadableSecret e) {
            // fail closed: a secret that does not decrypt (altered, moved from another row, or under a key this
            // instance lacks) signs nothing; the attempt fails and is retried on the schedule
            Log.errorf(
                    "Delivery %s not sent: a signing secret of endpoint %s cannot be decrypted (%s)",
                    lease.id(), lease.endpointId(), e.getMessage());
            return Uni.createFrom().item(Result.failed(null, "not sent: a signing secret cannot be decrypted"));
        }
        URI uri = URI.create(lease.url());
        String host = uri.getHost().startsWith("[")
                ? uri.getHost().substring(1, uri.getHost().length() - 1)
                : uri.getHost();
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        int port = uri.getPort() != -1 ? uri.getPort() : https ? 443 : 80;
        // Resolved now, not at registration, and every address checked: a changed DNS answer is checked too.
        return resolver.resolve(host).flatMap(addresses -> {
            Optional<String> refused = policy.checkAddresses(host, addresses);
            if (refused.isPresent()) {
                return Uni.createFrom().item(Result.failed(null, "not sent: " + refused.get()));
            }
            return send(lease, secrets, uri, host, port, https, addresses.get(0));
        });
    }

    private String open(Lease lease, StoredSecret secret) {
        return secret.plaintext() != null
                ? secret.plaintext()
                : cipher.open(lease.endpointId(), secret.id(), secret.keyId(), secret.ciphertext());
    }

    private Uni<Result> send(
            Lease lease, List<String> secrets, URI uri, String host, int port, boolean https, InetAddress address) {
        String body;
        try {
            body = mapper.writeValueAsString(lease.event());
        } catch (JsonProcessingException e) {
            return Uni.createFrom().failure(e);
        }
        String id = lease.eventId().toString();
        long timestamp = Instant.now().getEpochSecond();
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setServer(SocketAddress.inetSocketAddress(port, address.getHostAddress()))
                .setHost(host)
                .setPort(port)
                .setSsl(https)
                .setURI(path)
                .setFollowRedirects(false)
                .setTimeout(config.timeout().toMillis())
                .putHeader("content-type", "application/json")
                .putHeader("user-agent", "payments-webhooks/1")
                .putHeader("webhook-id", id)
                .putHeader("webhook-timestamp", Long.toString(timestamp))
                .putHeader("webhook-signature", Signatures.header(secrets, id, timestamp, body));
        if (drained != null) {
            // the last moment at which "not sent" is certain
            return Uni.createFrom().item(Result.STOPPING);
        }
        return client.request(options)
                .flatMap(request -> request.send(body))
                .flatMap(response -> response.end().replaceWith(response.statusCode()))
                .ifNoItem()
                .after(config.timeout())
                .failWith(() -> new java.util.concurrent.TimeoutException("no answer within " + config.timeout()))
                .map(status -> status >= 200 && status < 300
                        ? new Result(status, true, null)
                        : Result.failed(
                                status,
                                status >= 300 && status < 400
                                        ? "HTTP " + status + ": redirects are not followed"
                                        : "HTTP " + status));
    }

    private static String describe(Throwable e) {
        if (e instanceof UnknownHostException) {
            return "cannot resolve " + e.getMessage();
        }
        String message = e.getMessage() == null ? "" : ": " + e.getMessage();
        return e.getClass().getSimpleName() + message;
    }

    record Result(Integer status, boolean succeeded, String error) {
        /** Not sent because the sender is stopping: the delivery is given back, no attempt recorded. */
        static final Result STOPPING = new Result(null, false, "not sent: stopping");

        static Result failed(Integer status, String error) {
            return new Result(status, false, error);
        }
    }
}
