package com.payments.refunds.messaging;

import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Runs tasks concurrently, one at a time per key and in the order they were submitted for that key: a lane per key
 * that has a task running, holding that key's later tasks. At most {@code capacity} tasks are admitted (running or
 * waiting in a lane); {@link #submit} completes once its task is admitted, so a caller that submits one task after
 * the other (the Kafka connector) is held back while all slots are taken. A lane is removed as soon as it is empty,
 * so the map never holds more than {@code capacity} keys. A task without a key has no order to keep and runs at once
 * once admitted.
 */
final class KeyedLanes {

    /** A task waiting for admission: normally at most one, the connector's next record. */
    private record Pending(String key, Supplier<Uni<Void>> task, UniEmitter<? super Void> admitted) {}

    private final IntSupplier capacity;
    private final Map<String, ArrayDeque<Supplier<Uni<Void>>>> lanes = new HashMap<>();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private int admitted;

    /** {@code capacity} is read at every admission, so it may change (an adaptive limit). */
    KeyedLanes(IntSupplier capacity) {
        this.capacity = capacity;
    }

    /**
     * Admits {@code task} behind the earlier tasks of {@code key}. The returned {@code Uni} completes when the task is
     * admitted, not when it ends; the task itself must never fail (it reports its own outcome).
     */
    Uni<Void> submit(String key, Supplier<Uni<Void>> task) {
        return Uni.createFrom().emitter(emitter -> {
            Supplier<Uni<Void>> start;
            synchronized (this) {
                if (!pending.isEmpty() || admitted >= capacity.getAsInt()) {
                    pending.addLast(new Pending(key, task, emitter));
                    return;
                }
                start = admit(key, task);
            }
            emitter.complete(null);
            run(key, start);
        });
    }

    /** Tasks admitted and not yet ended (running or waiting in a lane). */
    synchronized int admitted() {
        return admitted;
    }

    /** Counts the task in and returns it when it may start now, or null when it waits in its key's lane. */
    private Supplier<Uni<Void>> admit(String key, Supplier<Uni<Void>> task) {
        admitted++;
        if (key == null) {
            return task;
        }
        ArrayDeque<Supplier<Uni<Void>>> lane = lanes.get(key);
        if (lane == null) {
            lanes.put(key, new ArrayDeque<>());
            return task;
        }
        lane.addLast(task);
        return null;
    }

    private void run(String key, Supplier<Uni<Void>> task) {
        if (task == null) {
            return;
        }
        Uni.createFrom().<Void>deferred(task::get).subscribe().with(ignored -> ended(key), failure -> {
            Log.errorf(failure, "task of key %s failed", key);
            ended(key);
        });
    }

    private void ended(String key) {
        Supplier<Uni<Void>> next = null;
        Pending newcomer = null;
        Supplier<Uni<Void>> newcomerStart = null;
        synchronized (this) {
            admitted--;
            if (key != null) {
                ArrayDeque<Supplier<Uni<Void>>> lane = lanes.get(key);
                next = lane.pollFirst();
                if (next == null) {
                    lanes.remove(key);
                }
            }
            if (!pending.isEmpty() && admitted < capacity.getAsInt()) {
                newcomer = pending.pollFirst();
                newcomerStart = admit(newcomer.key(), newcomer.task());
            }
        }
        run(key, next);
        if (newcomer != null) {
            newcomer.admitted().complete(null);
            run(newcomer.key(), newcomerStart);
        }
    }
}
