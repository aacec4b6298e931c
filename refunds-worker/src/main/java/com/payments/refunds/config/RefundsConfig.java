package com.payments.refunds.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** Configuration of refunds-worker (prefix {@code refunds}). */
@ConfigMapping(prefix = "refunds")
public interface RefundsConfig {

    /** Name of this consumer in {@code consumed_events}; one per logical consumer, shared by its replicas. */
    @WithDefault("refunds-worker")
    String consumerName();

    /** Retries of a refund whose PSP outcome is unknown (timeout, 5xx, circuit open). */
    Retry retry();

    /** The scheduled sync of PENDING refunds. */
    Sync sync();

    /** Retries of one Kafka record whose processing failed (database down, bug) before it goes to the DLQ. */
    Processing processing();

    /** Housekeeping of {@code consumed_events}, the deduplication log. */
    Dedup dedup();

    /** The adaptive limit of concurrent PSP calls; the refund-commands consumer's records in flight follow it. */
    PspLimit pspLimit();

    /** The gauges read from PostgreSQL and the broker (pending refunds, dead-letter topic). */
    Metrics metrics();

    /** The refund-commands consumer's per-payment lanes. */
    Lanes lanes();

    /** The statement that records a command's PSP success or decline, shared by concurrent refunds. */
    Outcome outcome();

    /** The statement that claims a command's refund before its PSP call, shared by concurrent commands. */
    Claim claim();

    interface Outcome {
        /**
         * Outcome statements (a command's success or decline: its {@code consumed_events} insert and {@code
         * settle_refund}) one instance runs at a time. Outcomes that come while all run wait and go together in the
         * next one, one row each: fewer statements in flight make bigger ones, which cost PostgreSQL less per refund,
         * but one slow statement then holds up more refunds. Each uses a connection of the pool while it runs.
         */
        @WithDefault("1")
        int statementsInFlight();

        /** Outcomes in one statement at most. */
        @WithDefault("32")
        int maxBatchSize();
    }

    interface Claim {
        /**
         * Claim statements (a command's deduplication check, look-up and lease) one instance runs at a time. Commands
         * that come while all run wait and go together in the next one, one row each, as outcomes do ({@link
         * Outcome}). Each uses a connection of the pool while it runs.
         */
        @WithDefault("1")
        int statementsInFlight();

        /** Commands in one claim statement at most. */
        @WithDefault("32")
        int maxBatchSize();
    }

    interface Lanes {
        /**
         * Records of one payment that may wait behind its running one. A record that comes when its payment already
         * has this many waiting is handed to the pending-refund sync (its refund made due at once) and acknowledged,
         * so that a lane's last record is acknowledged within (1 + this) × (PSP timeout + two short transactions),
         * well below {@code throttled.unprocessed-record-max-age.ms}.
         */
        @WithDefault("4")
        int maxWaiting();
    }

    interface Metrics {
        /**
         * Period of the refresh on each instance (a Quarkus scheduler {@code every} value; {@code off} disables it):
         * one indexed query over the PENDING refunds and one offsets request for the dead-letter topic.
         */
        @WithDefault("30s")
        String every();
    }

    interface PspLimit {
        /** Limit at start, before any round trip was measured. */
        @WithDefault("20")
        int initial();

        /** The limit never goes below this, however slow the PSP gets. */
        @WithDefault("20")
        int min();

        /**
         * Hard ceiling of concurrent PSP calls per instance. The adapters' connection pools
         * ({@code psp.sandbox.max-connections}, {@code psp.stripe.max-connections}) follow it (one HTTP/1.1
         * keep-alive connection per call in flight). The consumer holds at most twice this
         * many records in flight.
         */
        @WithDefault("256")
        int max();

        /**
         * A PSP call's own timeout, inside the limit: a call the PSP does not answer within it fails, and so cuts the
         * limit. Keep it below {@code PspClient}'s fault-tolerance {@code @Timeout} (5 s, which also bounds the wait
         * for a permit): a call that timeout ends is cancelled, and the limit does not count cancelled calls.
         */
        @WithDefault("4500ms")
        Duration callTimeout();
    }

    interface Dedup {
        /**
         * How long an applied event id is remembered. Longer than the topic's retention (Kafka's default is 7 days),
         * so no record that can still be delivered is forgotten; one older than this is still harmless, since a
         * refund that is no longer PENDING ignores its command.
         */
        @WithDefault("14d")
        Duration retention();

        /** Period of the purge on each instance (a Quarkus scheduler {@code every} value; {@code off} disables it). */
        @WithDefault("1h")
        String purgeEvery();

        /** Rows deleted per statement. */
        @WithDefault("1000")
        int purgeBatchSize();

        /** Statements per run at most (then the next run goes on). */
        @WithDefault("100")
        int purgeMaxBatches();
    }

    interface Retry {
        /** Wait before the first retry of an unknown outcome; doubles with every attempt. */
        @WithDefault("10s")
        Duration initialBackoff();

        /** Upper bound of the wait between retries. */
        @WithDefault("10m")
        Duration maxBackoff();

        /**
         * A refund still PENDING this long after its creation gets an {@code operations_queue} item
         * ({@code refund_pending_too_long}); the sync keeps retrying it at {@link #maxBackoff()}.
         */
        @WithDefault("1h")
        Duration escalateAfter();
    }

    interface Sync {
        /** Period of the sync on each instance (a Quarkus scheduler {@code every} value, e.g. {@code 15s}). */
        @WithDefault("15s")
        String every();

        /** Refunds claimed per sync run. */
        @WithDefault("50")
        int batchSize();

        /**
         * Payments whose refunds one sync run re-checks at once (a payment's own refunds one after the other): the
         * batch must end inside the lease even at a slow PSP; the PSP limit still bounds the calls.
         */
        @WithDefault("10")
        int concurrency();

        /**
         * How long a claimed refund is hidden from other claims (the consumer and other replicas' syncs) while its
         * PSP call runs; longer than the PSP timeout.
         */
        @WithDefault("2m")
        Duration lease();

        /**
         * A PENDING refund that no one has scheduled (its command never executed: relay or worker down) is picked
         * up by the sync after this long.
         */
        @WithDefault("5m")
        Duration unscheduledAfter();
    }

    interface Processing {
        /** Retries of a failed record (not counting the first try). */
        @WithDefault("3")
        int retries();

        /** First wait between retries; exponential, with jitter. */
        @WithDefault("200ms")
        Duration initialBackoff();

        /** Upper bound of the wait between retries. */
        @WithDefault("2s")
        Duration maxBackoff();
    }
}
