package com.payments.psp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class PspConcurrencyLimitTest {

    private static PspConcurrencyLimit limitOfOne(int maxWaiting, Duration maxWait) {
        return new PspConcurrencyLimit(
                new PspLimitSettings(1, 1, 1, maxWaiting, maxWait), new SimpleMeterRegistry(), "test.psp");
    }

    @Test
    void aCallOverTheLimitWaitsAndRunsWhenTheRunningCallEnds() throws Exception {
        PspConcurrencyLimit limit = limitOfOne(10, Duration.ofSeconds(10));
        CompletableFuture<String> first = new CompletableFuture<>();
        AtomicInteger secondCalls = new AtomicInteger();

        CompletableFuture<String> firstAnswer =
                limit.run(() -> Uni.createFrom().completionStage(first)).subscribeAsCompletionStage();
        CompletableFuture<String> secondAnswer = limit.run(() -> {
                    secondCalls.incrementAndGet();
                    return Uni.createFrom().item("second");
                })
                .subscribeAsCompletionStage();

        assertThat(limit.inFlight()).isEqualTo(1);
        assertThat(limit.waiting()).isEqualTo(1);
        assertThat(secondCalls).hasValue(0);
        first.complete("first");
        assertThat(firstAnswer.get(5, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(secondAnswer.get(5, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(secondCalls).hasValue(1);
        assertThat(limit.inFlight()).isZero();
    }

    @Test
    void aWaitThatPassesItsDeadlineFailsWithoutCallingAndLeavesTheQueue() throws Exception {
        PspConcurrencyLimit limit = limitOfOne(10, Duration.ofMillis(100));
        CompletableFuture<String> first = new CompletableFuture<>();
        AtomicInteger secondCalls = new AtomicInteger();
        limit.run(() -> Uni.createFrom().completionStage(first)).subscribeAsCompletionStage();

        CompletableFuture<String> secondAnswer = limit.run(() -> {
                    secondCalls.incrementAndGet();
                    return Uni.createFrom().item("second");
                })
                .subscribeAsCompletionStage();

        ExecutionException failure = org.junit.jupiter.api.Assertions.assertThrows(
                ExecutionException.class, () -> secondAnswer.get(5, TimeUnit.SECONDS));
        assertThat(failure.getCause()).isInstanceOf(PspSaturatedException.class);
        assertThat(limit.waiting()).isZero();
        first.complete("first");
        assertThat(secondCalls).hasValue(0);
        assertThat(limit.inFlight()).isZero();
        // the slot is free again
        assertThat(limit.run(() -> Uni.createFrom().item("third")).await().atMost(Duration.ofSeconds(5)))
                .isEqualTo("third");
    }

    @Test
    void aCallFindingTheWaitingRoomFullFailsAtOnce() {
        PspConcurrencyLimit limit = limitOfOne(1, Duration.ofSeconds(10));
        CompletableFuture<String> first = new CompletableFuture<>();
        limit.run(() -> Uni.createFrom().completionStage(first)).subscribeAsCompletionStage();
        limit.run(() -> Uni.createFrom().item("waits")).subscribeAsCompletionStage();

        CompletableFuture<String> third =
                limit.run(() -> Uni.createFrom().item("third")).subscribeAsCompletionStage();

        assertThat(third).isCompletedExceptionally();
        assertThat(third.handle((item, failure) -> failure).join()).isInstanceOf(PspSaturatedException.class);
        first.complete("first");
    }

    private static PspConcurrencyLimit limitFrom(int initial) {
        return new PspConcurrencyLimit(
                new PspLimitSettings(initial, 16, 2048, 4096, Duration.ofSeconds(30)),
                new SimpleMeterRegistry(),
                "test.psp");
    }

    /** {@code calls} calls at once, each answering {@code answer} after {@code latency}; waits for all of them. */
    private static void burst(PspConcurrencyLimit limit, int calls, Duration latency, Uni<String> answer)
            throws Exception {
        CompletableFuture<String> allStarted = new CompletableFuture<>();
        List<CompletableFuture<String>> running = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            running.add(limit.run(() -> Uni.createFrom()
                            .completionStage(allStarted)
                            .onItem()
                            .delayIt()
                            .by(latency)
                            .replaceWith(answer))
                    .subscribeAsCompletionStage());
        }
        allStarted.complete("go");
        for (CompletableFuture<String> call : running) {
            call.handle((item, failure) -> item).get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * The end of a burst: the PSP's answers take 30 times longer (the instance's own queueing), with no error. That
     * is no sign that the PSP is overloaded, so the limit holds. Gradient2 cut it by about a tenth per slow call
     * that ran with more than half the limit in flight, here from 100 to 46 (docs/benchmarks.md, round 2 of the 1 s
     * run).
     */
    @Test
    void aLatencyRiseWithoutErrorsDoesNotCutTheLimit() throws Exception {
        PspConcurrencyLimit limit = limitFrom(100);
        for (int round = 0; round < 5; round++) {
            burst(limit, 150, Duration.ofMillis(10), Uni.createFrom().item("ok"));
        }
        int before = limit.limit();

        // every permit in use and as many calls waiting, as in a burst's last seconds
        burst(limit, 2 * before, Duration.ofMillis(300), Uni.createFrom().item("ok"));

        assertThat(before).isGreaterThanOrEqualTo(100);
        assertThat(limit.limit()).isGreaterThanOrEqualTo(before);
    }

    /** Timeouts (a failed call) and answers the caller marks as PSP errors cut the limit. */
    @Test
    void timeoutsAndPspErrorsCutTheLimit() throws Exception {
        PspConcurrencyLimit timedOut = limitFrom(200);
        burst(timedOut, 50, Duration.ofMillis(5), Uni.createFrom().failure(new TimeoutException()));
        // 50 calls that ran together are one sign of overload: one cut, not 50 (0.9^50 would be the minimum)
        assertThat(timedOut.limit()).isEqualTo(180);
        burst(timedOut, 1, Duration.ofMillis(5), Uni.createFrom().failure(new TimeoutException()));
        assertThat(timedOut.limit()).isEqualTo(162);

        PspConcurrencyLimit errors = limitFrom(200);
        String answer = errors.run(() -> Uni.createFrom().item("http_503"), "http_503"::equals)
                .await()
                .atMost(Duration.ofSeconds(5));
        assertThat(answer).isEqualTo("http_503");
        assertThat(errors.limit()).isLessThan(200);
    }

    /**
     * Failures the caller says tell nothing of the PSP (its circuit breaker's refusals) neither cut nor raise the
     * limit, one after the other as a breaker refuses them, while the PSP's own failures still cut it.
     */
    @Test
    void failuresTheCallerMarksAsNoSampleLeaveTheLimit() {
        PspConcurrencyLimit limit = limitFrom(200);
        IllegalStateException refused = new IllegalStateException("circuit open");
        for (int i = 0; i < 30; i++) {
            Uni<String> call = limit.run(() -> Uni.createFrom().failure(refused), item -> false, refused::equals);
            assertThatThrownBy(() -> call.await().atMost(Duration.ofSeconds(5))).isSameAs(refused);
        }
        assertThat(limit.limit()).isEqualTo(200);
        assertThat(limit.inFlight()).isZero();

        Uni<String> timedOut =
                limit.run(() -> Uni.createFrom().failure(new TimeoutException()), item -> false, refused::equals);
        assertThatThrownBy(() -> timedOut.await().atMost(Duration.ofSeconds(5)));
        assertThat(limit.limit()).isEqualTo(180);
    }

    /**
     * Callers that go away cancel their calls, running or waiting, as a load generator does when it closes its
     * connections at the end of a run. That says nothing about the PSP: the limit neither falls nor rises. Counted as
     * drops, they cut it in a cascade (here from 200 to 84 and to 117 in two runs of the old code; in the 1 s benchmark
     * from 2,048 to 16). Repeated: a caller that goes away just as its permit comes is a race, and two of them leaked
     * the permit (11 runs in 3,000 under CPU load, 2026-12-07; one failed CI): it was granted but not yet on the
     * waiter, or on the call not yet subscribed.
     */
    @RepeatedTest(50)
    void cancelledCallsNeitherCutNorRaiseTheLimit() throws Exception {
        PspConcurrencyLimit limit = limitFrom(200);
        List<CompletableFuture<Throwable>> callers = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            callers.add(limit.run(() -> Uni.createFrom().<String>nothing())
                    .ifNoItem()
                    .after(Duration.ofMillis(20 + i % 7))
                    .fail()
                    .subscribeAsCompletionStage()
                    .handle((item, failure) -> failure));
        }
        for (CompletableFuture<Throwable> caller : callers) {
            assertThat(caller.get(5, TimeUnit.SECONDS)).isInstanceOf(io.smallrye.mutiny.TimeoutException.class);
        }

        assertThat(limit.limit()).isEqualTo(200);
        assertThat(limit.inFlight()).isZero();
        assertThat(limit.waiting()).isZero();
    }
}
