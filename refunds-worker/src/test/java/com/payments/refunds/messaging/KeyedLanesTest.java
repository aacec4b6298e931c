package com.payments.refunds.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
}
