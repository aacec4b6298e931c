package com.payments.relay.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Settings of the outbox relay (prefix {@code relay}). The broker address is {@code kafka.bootstrap.servers}. */
@ConfigMapping(prefix = "relay")
public interface RelayConfig {
    /** Start the relay with the application. */
    @WithDefault("true")
    boolean enabled();

    /** Unsent rows read, published and marked per round. */
    @WithDefault("500")
    int batchSize();

    /**
     * Longest wait between two looks at the table when no NOTIFY arrives (the fallback when a notification is
     * lost), and how often a standby replica tries to become the publisher.
     */
    @WithDefault("1s")
    Duration pollInterval();

    /** First wait after a failure (database or broker); doubles on each further failure. */
    @WithDefault("200ms")
    Duration backoffInitial();

    /** Longest wait after failures. */
    @WithDefault("10s")
    Duration backoffMax();

    /** How often the unsent-rows gauges are refreshed from the database. */
    @WithDefault("5s")
    Duration statsInterval();

    /** Published rows older than this are deleted. */
    @WithDefault("7d")
    Duration retention();

    /** Rows deleted per retention statement (bounded, so one run never holds many locks for long). */
    @WithDefault("1000")
    int retentionBatchSize();

    /** How often retention runs when the previous batch was not full. */
    @WithDefault("1m")
    Duration retentionInterval();

    /** Producer settings. */
    Producer producer();

    /**
     * How soon a dead peer is noticed on the relay's PostgreSQL connections (the control connection, which holds the
     * publisher lock, and the pool). Sent to PostgreSQL as the session's {@code tcp_keepalives_*} and
     * {@code tcp_user_timeout} settings, so that the server drops the session of a publisher whose host died or lost
     * its network, which frees the publisher lock: a standby takes over after about {@link Keepalive#userTimeout()}
     * plus {@link #pollInterval()}. See docs/outbox-relay.md, "Takeover".
     */
    Keepalive keepalive();

    interface Keepalive {
        /** Silence on a connection before the server sends the first keepalive probe ({@code tcp_keepalives_idle}). */
        @WithDefault("5s")
        Duration idle();

        /** Time between unanswered probes ({@code tcp_keepalives_interval}). */
        @WithDefault("2s")
        Duration interval();

        /** Unanswered probes after which the server drops the session ({@code tcp_keepalives_count}). */
        @WithDefault("3")
        int count();

        /**
         * Longest time data the server sent may stay unacknowledged, and, once probing started, longest time without
         * an answer, before the server drops the session ({@code tcp_user_timeout}). The takeover bound.
         */
        @WithDefault("10s")
        Duration userTimeout();

        /**
         * How often the server looks at the client's socket while the session runs a statement
         * ({@code client_connection_check_interval}). A backend reads its socket only between statements, so without
         * this a session busy in one (waiting for a lock, such as the fence of V60) outlives its dead client, and its
         * publisher lock with it, until the statement ends. Needs PostgreSQL 14 or later on Linux, macOS or BSD (an
         * older server refuses the connection); {@code 0} does not send it.
         */
        @WithDefault("1s")
        Duration connectionCheckInterval();
    }

    interface Producer {
        /** Upper bound for a record to be acknowledged, retries included ({@code delivery.timeout.ms}). */
        @WithDefault("30s")
        Duration deliveryTimeout();

        /** {@code request.timeout.ms}; keep it below the delivery timeout. */
        @WithDefault("10s")
        Duration requestTimeout();

        /** How long a send may block on metadata or a full buffer ({@code max.block.ms}). */
        @WithDefault("10s")
        Duration maxBlock();

        /** {@code linger.ms}: time to fill a batch; trades a little latency for throughput. */
        @WithDefault("2ms")
        Duration linger();
    }
}
