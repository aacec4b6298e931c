package com.payments.contracts.sql;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntConsumer;

/**
 * Runs one SQL statement for many callers at once. While {@code maxInFlight} statements run, new calls wait in a
 * queue, and the next statement takes all of them (up to {@code maxBatchSize}). A call that finds a free slot runs
 * at once, alone: batches form only under load, and add no wait of their own. PostgreSQL spends far less per row on
 * one statement of several rows than on one statement per row (docs/benchmarks.md).
 *
 * <p>The statement gets the inputs in call order and answers one output per input, in the same order. It must be a
 * single autocommit statement: when PostgreSQL rejects it (a {@link PgException}), none of it happened, and each call
 * of the batch is run again alone, so one bad row fails only its own call. Any other failure (a connection lost,
 * when the statement may have committed) fails every call of the batch, as it would fail a call run alone.
 *
 * <p>Optionally, a call that waited longer than {@code maxWait} for its statement fails with {@link
 * DatabaseBusyException} instead of joining one (the caller sheds its request: nothing of it ran), and calls with the
 * same {@code exclusiveKey} never share a statement (the later one goes in a later statement, in order): for a
 * statement whose rows would otherwise update one row twice.
 *
 * <p>Each caller gets its answer on its own Vert.x context, not on the one that happened to run the batch.
 */
public final class StatementBatcher<I, O> {
    private record Call<I, O>(I input, UniEmitter<? super O> emitter, Context context, long queuedNanos) {}

    private final Function<List<I>, Uni<List<O>>> statement;
    private final int maxBatchSize;
    private final int maxInFlight;
    private final IntConsumer batchSizes;
    private final long maxWaitNanos;
    private final Function<I, Object> exclusiveKey;
    private final Deque<Call<I, O>> waiting = new ConcurrentLinkedDeque<>();
    private final AtomicInteger inFlight = new AtomicInteger();

    /** @param batchSizes told the size of every statement run (a metric) */
    public StatementBatcher(
            Function<List<I>, Uni<List<O>>> statement, int maxBatchSize, int maxInFlight, IntConsumer batchSizes) {
        this(statement, maxBatchSize, maxInFlight, batchSizes, null, null);
    }

    /**
     * @param maxWait how long a call may wait for its statement to start (null: without limit)
     * @param exclusiveKey calls with equal keys never share a statement (null: any calls may)
     */
    public StatementBatcher(
            Function<List<I>, Uni<List<O>>> statement,
            int maxBatchSize,
            int maxInFlight,
            IntConsumer batchSizes,
            Duration maxWait,
            Function<I, Object> exclusiveKey) {
        if (maxBatchSize < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("maxBatchSize and maxInFlight must be at least 1");
        }
        this.statement = statement;
        this.maxBatchSize = maxBatchSize;
        this.maxInFlight = maxInFlight;
        this.batchSizes = batchSizes;
        this.maxWaitNanos = maxWait == null ? Long.MAX_VALUE : maxWait.toNanos();
        this.exclusiveKey = exclusiveKey;
    }

    public Uni<O> submit(I input) {
        return Uni.createFrom().emitter(emitter -> {
            waiting.add(new Call<>(input, emitter, Vertx.currentContext(), System.nanoTime()));
            drain();
        });
    }

    /** Starts statements while slots are free and calls wait. A call added after its check is seen by the finisher. */
    private void drain() {
        while (!waiting.isEmpty()) {
            int running = inFlight.get();
            if (running >= maxInFlight) {
                return;
            }
            if (!inFlight.compareAndSet(running, running + 1)) {
                continue;
            }
            List<Call<I, O>> batch = take();
            if (batch.isEmpty()) {
                inFlight.decrementAndGet();
                continue;
            }
            run(batch).subscribe().with(done -> finished(), failure -> finished());
        }
    }

    /** The next statement's calls; fails the calls whose wait ran out; leaves calls of a key already taken queued. */
    private List<Call<I, O>> take() {
        List<Call<I, O>> batch = new ArrayList<>();
        List<Call<I, O>> later = new ArrayList<>();
        Set<Object> keys = exclusiveKey == null ? null : new HashSet<>();
        long now = System.nanoTime();
        for (Call<I, O> call; batch.size() < maxBatchSize && (call = waiting.poll()) != null; ) {
            if (now - call.queuedNanos() > maxWaitNanos) {
                DatabaseBusyException busy = new DatabaseBusyException("statement did not start within "
                        + Duration.ofNanos(maxWaitNanos).toMillis() + " ms");
                Call<I, O> expired = call;
                answer(expired, () -> expired.emitter().fail(busy));
            } else if (keys != null && !keys.add(exclusiveKey.apply(call.input()))) {
                later.add(call);
            } else {
                batch.add(call);
            }
        }
        // back to the head of the queue, in their order
        for (int i = later.size() - 1; i >= 0; i--) {
            waiting.addFirst(later.get(i));
        }
        return batch;
    }

    private void finished() {
        inFlight.decrementAndGet();
        drain();
    }

    /** Runs the batch and answers its calls; never fails. */
    private Uni<Void> run(List<Call<I, O>> batch) {
        return execute(batch)
                .onFailure(PgException.class)
                .recoverWithUni(rejected -> batch.size() == 1
                        ? failAll(batch, rejected)
                        : Multi.createFrom()
                                .iterable(batch)
                                .onItem()
                                .transformToUniAndConcatenate(call -> execute(List.of(call))
                                        .onFailure()
                                        .recoverWithUni(failure -> failAll(List.of(call), failure)))
                                .collect()
                                .last())
                .onFailure()
                .recoverWithUni(failure -> failAll(batch, failure));
    }

    /** One statement for the batch; its calls answered on success; the failure passed on otherwise. */
    private Uni<Void> execute(List<Call<I, O>> batch) {
        return Uni.createFrom()
                .deferred(() -> {
                    batchSizes.accept(batch.size());
                    return statement.apply(batch.stream().map(Call::input).toList());
                })
                .invoke(outputs -> {
                    if (outputs.size() != batch.size()) {
                        throw new IllegalStateException(
                                "statement answered " + outputs.size() + " rows for " + batch.size() + " inputs");
                    }
                    for (int i = 0; i < batch.size(); i++) {
                        Call<I, O> call = batch.get(i);
                        O output = outputs.get(i);
                        answer(call, () -> call.emitter().complete(output));
                    }
                })
                .replaceWithVoid();
    }

    private Uni<Void> failAll(List<Call<I, O>> calls, Throwable failure) {
        for (Call<I, O> call : calls) {
            answer(call, () -> call.emitter().fail(failure));
        }
        return Uni.createFrom().voidItem();
    }

    private static void answer(Call<?, ?> call, Runnable emit) {
        Context context = call.context();
        if (context == null || context == Vertx.currentContext()) {
            emit.run();
        } else {
            context.runOnContext(ignored -> emit.run());
        }
    }
}
