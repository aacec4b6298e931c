package com.payments.refunds.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The bound of a lane: what comes when a key already has {@code maxWaiting} tasks waiting runs its hand-off. */
class KeyedLanesTest {
    /** Tasks that started, by name, each ending when the test says so. */
    private final Map<String, UniEmitter<? super Void>> running = new HashMap<>();

    private final List<String> started = new ArrayList<>();

    private Supplier<Uni<Void>> task(String name) {
        return () -> Uni.createFrom().emitter(emitter -> {
            synchronized (this) {
                started.add(name);
                running.put(name, emitter);
            }
        });
    }

    private void end(String name) {
        UniEmitter<? super Void> emitter;
        synchronized (this) {
            emitter = running.remove(name);
        }
        emitter.complete(null);
    }

    private void submit(KeyedLanes lanes, String key, String name) {
        lanes.submit(key, task(name), task(name + " handed off")).await().atMost(Duration.ofSeconds(1));
    }

    @Test
    void aTaskBeyondTheLanesBoundRunsItsHandOffAtOnceAndTheLaneKeepsItsOrder() {
        KeyedLanes lanes = new KeyedLanes(() -> 100, 1);
        submit(lanes, "p", "p1");
        submit(lanes, "p", "p2");
        submit(lanes, "p", "p3");
        submit(lanes, "q", "q1");
        assertThat(started).containsExactly("p1", "p3 handed off", "q1");
        assertThat(lanes.admitted()).isEqualTo(4);

        end("p3 handed off");
        end("p1");
        assertThat(started).containsExactly("p1", "p3 handed off", "q1", "p2");
        // Room in the lane again: the next task of the key waits in it.
        submit(lanes, "p", "p4");
        end("p2");
        assertThat(started).containsExactly("p1", "p3 handed off", "q1", "p2", "p4");
        end("p4");
        end("q1");
        assertThat(lanes.admitted()).isZero();
    }

    /**
     * A stop lets the running tasks end, starts nothing that waited (in a lane or for admission) and admits nothing
     * more; it completes when the last running task ended.
     */
    @Test
    void aStopLetsTheRunningTasksEndAndStartsNoOther() {
        KeyedLanes lanes = new KeyedLanes(() -> 3, 2);
        submit(lanes, "p", "p1");
        submit(lanes, "p", "p2");
        submit(lanes, "q", "q1");
        AtomicBoolean waitingAdmitted = new AtomicBoolean();
        lanes.submit("r", task("r1"), task("r1 handed off")).subscribe().with(ignored -> waitingAdmitted.set(true));
        assertThat(started).containsExactly("p1", "q1");

        CompletableFuture<Void> drained = lanes.stop().toCompletableFuture();
        AtomicBoolean lateAdmitted = new AtomicBoolean();
        lanes.submit("s", task("s1"), task("s1 handed off")).subscribe().with(ignored -> lateAdmitted.set(true));
        assertThat(lanes.admitted()).as("p2 dropped from its lane").isEqualTo(2);
        assertThat(drained).isNotDone();

        end("p1");
        assertThat(drained).isNotDone();
        end("q1");
        assertThat(drained).isCompleted();
        assertThat(started).as("p2, r1 and s1 never started").containsExactly("p1", "q1");
        assertThat(waitingAdmitted).isFalse();
        assertThat(lateAdmitted).isFalse();
        assertThat(lanes.admitted()).isZero();
        assertThat(lanes.stop()).isCompleted();
    }
}
