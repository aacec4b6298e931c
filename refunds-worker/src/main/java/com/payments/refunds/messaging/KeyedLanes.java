package com.payments.refunds.messaging;

import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Runs tasks concurrently, one at a time per key and in the order they were submitted for that key: a lane per key
 * that has a task running, holding that key's later tasks. At most {@code capacity} tasks are admitted (running or
 * waiting in a lane); {@link #submit} completes once its task is admitted, so a caller that submits one task after
 * the other (the Kafka connector) is held back while all slots are taken. A lane holds at most {@code maxWaiting}
 * tasks behind its running one: a task that comes when its lane is full runs its hand-off instead, at once and outside
 * the lane, so that one busy key can neither make its tasks wait without bound nor take every slot. A lane is removed
 * as soon as it is empty, so the map never holds more than {@code capacity} keys. A task without a key has no order
 * to keep and runs at once once admitted. {@link #stop} admits nothing more and starts no waiting task; the tasks
 * already running end as usual.
 */
final class KeyedLanes {

    /** A task waiting for admission: normally at most one, the connector's next record. */
    private record Pending(
            String key, Supplier<Uni<Void>> task, Supplier<Uni<Void>> handOff, UniEmitter<? super Void> admitted) {}

    /** What to start now, and the lane it ends in (null: none). */
    private record Start(String lane, Supplier<Uni<Void>> task) {}

    private final IntSupplier capacity;
    private final int maxWaiting;
    private final Map<String, ArrayDeque<Supplier<Uni<Void>>>> lanes = new HashMap<>();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private int admitted;
    /** Set by {@link #stop}; completes once no task runs any more. */
    private CompletableFuture<Void> drained;

    /** {@code capacity} is read at every admission, so it may change (an adaptive limit). */
    KeyedLanes(IntSupplier capacity, int maxWaiting) {
        this.capacity = capacity;
        this.maxWaiting = maxWaiting;
    }

    /**
     * Admits {@code task} behind the earlier tasks of {@code key}, or, when {@code key}'s lane already holds
     * {@code maxWaiting} tasks, starts {@code handOff} in its place. The returned {@code Uni} completes when the task
     * is admitted, not when it ends; neither task may fail (each reports its own outcome).
     */
    Uni<Void> submit(String key, Supplier<Uni<Void>> task, Supplier<Uni<Void>> handOff) {
        return Uni.createFrom().emitter(emitter -> {
            Start start;
            synchronized (this) {
                if (drained != null) {
                    // stopped: never admitted, so never acknowledged; its record is delivered again after a restart
                    return;
                }
                if (!pending.isEmpty() || admitted >= capacity.getAsInt()) {
                    pending.addLast(new Pending(key, task, handOff, emitter));
                    return;
                }
                start = admit(key, task, handOff);
            }
            emitter.complete(null);
            run(start);
        });
    }

    /**
     * Admits nothing more (a later {@link #submit} never completes) and drops the tasks waiting for admission or in a
     * lane: none of them started, so their records stay unacknowledged and are delivered again after a restart. The
     * returned stage completes once the tasks already running have ended.
     */
    CompletionStage<Void> stop() {
        synchronized (this) {
            if (drained != null) {
                return drained;
            }
            drained = new CompletableFuture<>();
            pending.clear();
            for (ArrayDeque<Supplier<Uni<Void>>> lane : lanes.values()) {
                admitted -= lane.size();
                lane.clear();
            }
            if (admitted > 0) {
                return drained;
            }
        }
        drained.complete(null);
        return drained;
    }

    /** Tasks admitted and not yet ended (running, waiting in a lane, or handing off). */
    synchronized int admitted() {
        return admitted;
    }

    /** Counts the task in and returns what starts now, or null when it waits in its key's lane. */
    private Start admit(String key, Supplier<Uni<Void>> task, Supplier<Uni<Void>> handOff) {
        admitted++;
        if (key == null) {
            return new Start(null, task);
        }
        ArrayDeque<Supplier<Uni<Void>>> lane = lanes.get(key);
        if (lane == null) {
            lanes.put(key, new ArrayDeque<>());
            return new Start(key, task);
        }
        if (lane.size() >= maxWaiting) {
            return new Start(null, handOff);
        }
        lane.addLast(task);
        return null;
    }

    private void run(Start start) {
        if (start == null) {
            return;
        }
        Uni.createFrom().<Void>deferred(start.task()::get).subscribe().with(ignored -> ended(start.lane()), failure -> {
            Log.errorf(failure, "task of lane %s failed", start.lane());
            ended(start.lane());
        });
    }

    private void ended(String lane) {
        Start next = null;
        Pending newcomer = null;
        Start newcomerStart = null;
        CompletableFuture<Void> drainedNow = null;
        synchronized (this) {
            admitted--;
            if (lane != null) {
                ArrayDeque<Supplier<Uni<Void>>> waiting = lanes.get(lane);
                Supplier<Uni<Void>> task = waiting.pollFirst();
                if (task == null) {
                    lanes.remove(lane);
                } else {
                    next = new Start(lane, task);
                }
            }
            if (drained != null) {
                drainedNow = admitted == 0 ? drained : null;
            } else if (!pending.isEmpty() && admitted < capacity.getAsInt()) {
                newcomer = pending.pollFirst();
                newcomerStart = admit(newcomer.key(), newcomer.task(), newcomer.handOff());
            }
        }
        if (drainedNow != null) {
            drainedNow.complete(null);
        }
        run(next);
        if (newcomer != null) {
            newcomer.admitted().complete(null);
            run(newcomerStart);
        }
    }
}
