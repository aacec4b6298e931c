package com.payments.psp;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
}
