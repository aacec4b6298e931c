package com.payments.relay.service;

import com.payments.relay.OutboxRow;
import com.payments.relay.config.RelayConfig;
import com.payments.relay.messaging.KafkaPublisher;
import com.payments.relay.repository.OutboxRepository;
import io.quarkus.logging.Log;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgConnection;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One relay replica: a loop on its own thread (it blocks, so never on an event loop).
 *
 * <p>A dedicated connection (the control connection) LISTENs on {@code outbox} and tries to hold the session
 * advisory lock that makes its replica the only publisher. The publisher reads the oldest unsent rows in id order
 * through that connection (so it reads nothing more once its lock session is gone), publishes them, waits for the
 * broker's acknowledgements and marks them sent, then looks again at once, or waits for a NOTIFY or the poll
 * interval. Replicas without the lock stand by and retry; when the publisher's session ends (crash, kill, and through
 * the {@code relay.keepalive.*} settings a dead host or network) PostgreSQL releases the lock and a standby takes
 * over. Any failure: back off, drop the control connection (and with it the lock), retry. See docs/outbox-relay.md.
 */
public final class RelayWorker {
    /** Key of the publisher lock (two-int form: its own space, never equal to a one-bigint key of V10). */
    static final String LOCK_SQL = "SELECT pg_try_advisory_lock(hashtext('outbox-relay'), 1) AS locked";
    /**
     * The wake-up fence (V60, V100), held exclusively while the publisher sleeps: a writer that cannot take it shared
     * notifies; one that can holds it to its commit, so taking it waits for the writers that saw the publisher awake.
     */
    static final String SLEEP_SQL = "SELECT pg_advisory_lock(hashtext('outbox-relay'), 2)";

    static final String WAKE_SQL = "SELECT pg_advisory_unlock(hashtext('outbox-relay'), 2)";

    /**
     * Longest wait for an answer on the control connection. No answer: the round fails and the replica gives up the
     * lock. (Vert.x 4.5 leaves the client's keepalive timers to the operating system, hours by default.)
     */
    private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(30);

    private final String name;
    private final Vertx vertx;
    private final PgConnectOptions connectOptions;
    private final Pool pool;
    private final KafkaPublisher publisher;
    private final RelayConfig config;
    private final RelayMetrics metrics;
    private final OutboxRepository repository = new OutboxRepository();
    private final Semaphore wake = new Semaphore(0);

    private volatile boolean running;
    private volatile Thread thread;
    private volatile PgConnection control;
    private volatile boolean leader;
    private volatile String problem = "starting";
    private Marking marking = Marking.NONE;
    /** Acknowledged rows of a short batch, marked sent by the next read in the same statement. */
    private List<Long> toMark = List.of();

    private long nextStats;
    private long nextRetention;

    public RelayWorker(
            String name,
            Vertx vertx,
            PgConnectOptions connectOptions,
            Pool pool,
            KafkaPublisher publisher,
            RelayConfig config,
            RelayMetrics metrics) {
        this.name = name;
        this.vertx = vertx;
        this.connectOptions = connectOptions;
        this.pool = pool;
        this.publisher = publisher;
        this.config = config;
        this.metrics = metrics;
        this.nextStats = System.nanoTime();
        this.nextRetention = System.nanoTime();
    }

    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        thread = new Thread(this::loop, "outbox-relay-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops the loop after the current round (a round in progress finishes: publish, then mark). */
    public void stop() {
        running = false;
        wake.release();
        Thread t = thread;
        if (t != null) {
            try {
                t.join(Duration.ofSeconds(30).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeControl();
    }

    /** Null when the last round worked (database and, for the publisher, broker reachable); else what failed. */
    public String problem() {
        return problem;
    }

    public boolean isLeader() {
        return leader;
    }

    private void loop() {
        Duration backoff = config.backoffInitial();
        while (running) {
            try {
                boolean more = round();
                problem = null;
                backoff = config.backoffInitial();
                if (!more) {
                    sleepUntilWoken();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                problem = e.getClass().getSimpleName() + ": " + e.getMessage();
                metrics.publishError();
                Log.warnf("outbox-relay %s: %s; retrying in %d ms", name, problem, backoff.toMillis());
                marking = Marking.NONE; // read those rows again unless their mark committed: at least once
                toMark = List.of();
                closeControl();
                sleep(backoff);
                backoff = backoff.multipliedBy(2).compareTo(config.backoffMax()) > 0
                        ? config.backoffMax()
                        : backoff.multipliedBy(2);
            }
        }
        try {
            finishMarking();
            if (!toMark.isEmpty()) {
                repository.markSent(pool, toMark).await().atMost(CONTROL_TIMEOUT);
            }
        } catch (RuntimeException e) {
            Log.warnf("outbox-relay %s: %s (those rows will be published again)", name, e.getMessage());
        }
    }

    /** One round; true when it published rows (look again at once: more may have committed meanwhile). */
    private boolean round() {
        PgConnection connection = ensureControl();
        if (!leader) {
            leader = connection
                    .query(LOCK_SQL)
                    .execute()
                    .map(rows -> rows.iterator().next().getBoolean("locked"))
                    .await()
                    .atMost(config.pollInterval().plusSeconds(10));
            metrics.leader(leader);
            if (leader) {
                Log.infof("outbox-relay %s: now the publisher", name);
                // a previous release's publisher (V60's flag) may have died asleep: writers would notify on and on
                repository.clearSleepingFlag(connection).await().atMost(CONTROL_TIMEOUT);
            }
        }
        refreshStatsIfDue();
        if (!leader) {
            return false;
        }
        // Read through the session that holds the lock: a publisher whose session is gone (the server dropped it
        // while this process was stopped or cut off, and a standby took over) fails here instead of publishing on.
        List<OutboxRow> rows = repository
                .unsent(connection, config.batchSize(), marking.ids(), toMark)
                .await()
                .atMost(CONTROL_TIMEOUT);
        toMark = List.of();
        if (!rows.isEmpty()) {
            KafkaPublisher.Result result = publisher.publish(rows);
            if (!result.acknowledged().isEmpty()) {
                // A full batch is marked while the next batch is read and published (at most one mark in flight);
                // a short one by the next read, the look again at once, in the same statement (one statement less
                // per round when the relay keeps up). A crash or a failed mark before it commits re-publishes the
                // batch: at least once, consumers deduplicate.
                finishMarking();
                if (rows.size() < config.batchSize() && result.failure() == null) {
                    toMark = result.acknowledged();
                } else {
                    marking = new Marking(
                            result.acknowledged(),
                            repository.markSent(pool, result.acknowledged()).subscribeAsCompletionStage());
                }
                metrics.published(result.acknowledged().size());
            }
            if (result.failure() != null) {
                throw new IllegalStateException(
                        "publish failed after " + result.acknowledged().size() + " of " + rows.size() + " rows: "
                                + result.failure(),
                        result.failure());
            }
        }
        if (rows.size() < config.batchSize()) {
            finishMarking(); // nothing more right now: settle the mark before waiting
        }
        deleteExpiredIfDue();
        return !rows.isEmpty();
    }

    /**
     * Waits for a NOTIFY or at most the poll interval. The publisher first says it sleeps by taking the fence, since
     * writers notify only then (V60: a NOTIFY serializes commits), which waits for the writers that saw it awake, and
     * looks once more. No row is written for it (V100). A failure closes the control connection, which frees the fence.
     */
    private void sleepUntilWoken() throws InterruptedException {
        PgConnection connection = control;
        if (!leader || connection == null) {
            wake.tryAcquire(config.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
            return;
        }
        wake.drainPermits(); // every writer that reads the flag from here on notifies
        connection.preparedQuery(SLEEP_SQL).execute().await().atMost(CONTROL_TIMEOUT);
        if (!repository.hasUnsent(connection).await().atMost(CONTROL_TIMEOUT)) {
            wake.tryAcquire(config.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
        }
        connection.preparedQuery(WAKE_SQL).execute().await().atMost(CONTROL_TIMEOUT);
    }

    /** The rows of the last published batch while their mark runs; the next read skips them. */
    private record Marking(List<Long> ids, CompletableFuture<Integer> done) {
        static final Marking NONE = new Marking(List.of(), CompletableFuture.completedFuture(0));
    }

    /** Waits for the mark in flight; a failed mark fails the round (its rows are read and published again). */
    private void finishMarking() {
        Marking current = marking;
        marking = Marking.NONE;
        try {
            current.done().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while marking rows sent", e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("marking rows sent failed: " + e.getCause(), e);
        }
    }

    private PgConnection ensureControl() {
        PgConnection current = control;
        if (current != null) {
            return current;
        }
        leader = false;
        metrics.leader(false);
        PgConnection connection =
                PgConnection.connect(vertx, connectOptions).await().atMost(Duration.ofSeconds(10));
        connection.notificationHandler(notification -> wake.release());
        connection.closeHandler(() -> {
            if (control == connection) {
                control = null;
                leader = false;
                metrics.leader(false);
                wake.release();
            }
        });
        control = connection;
        connection.query("LISTEN outbox").execute().await().atMost(Duration.ofSeconds(10));
        return connection;
    }

    private void closeControl() {
        PgConnection connection = control;
        control = null;
        leader = false;
        metrics.leader(false);
        if (connection != null) {
            try {
                connection.close().await().atMost(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                Log.debugf("outbox-relay %s: closing the control connection: %s", name, e);
            }
        }
    }

    private void refreshStatsIfDue() {
        long now = System.nanoTime();
        if (now - nextStats < 0) {
            return;
        }
        OutboxRepository.Backlog backlog = repository.backlog(pool).await().atMost(Duration.ofSeconds(30));
        metrics.backlog(backlog.unsent(), backlog.oldestAgeSeconds());
        nextStats = now + config.statsInterval().toNanos();
    }

    private void deleteExpiredIfDue() {
        long now = System.nanoTime();
        if (now - nextRetention < 0) {
            return;
        }
        int deleted = repository
                .deletePublishedBefore(pool, config.retention(), config.retentionBatchSize())
                .await()
                .atMost(Duration.ofSeconds(60));
        if (deleted > 0) {
            Log.debugf("outbox-relay %s: deleted %d published rows past retention", name, deleted);
        }
        // A full batch means more are due: run again next round, otherwise after the interval.
        nextRetention = deleted == config.retentionBatchSize()
                ? now
                : now + config.retentionInterval().toNanos();
    }

    private void sleep(Duration duration) {
        long end = System.nanoTime() + duration.toNanos();
        try {
            while (running && end - System.nanoTime() > 0) {
                Thread.sleep(Math.min(50, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }
}
