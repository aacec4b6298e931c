package com.payments.refunds.service;

import com.payments.contracts.events.RefundRequested;
import com.payments.contracts.sql.RefundSettlement;
import com.payments.contracts.sql.StatementBatcher;
import com.payments.contracts.tracing.TraceHeaders;
import com.payments.refunds.Refund;
import com.payments.refunds.client.PspClient;
import com.payments.refunds.client.PspOutcome;
import com.payments.refunds.config.RefundsConfig;
import com.payments.refunds.repository.ConsumedEventRepository;
import com.payments.refunds.repository.OperationsQueueRepository;
import com.payments.refunds.repository.RefundRepository;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * Executes refunds at the PSP and records the outcome. No database transaction is open during a PSP call: a claim
 * transaction counts the attempt and leases the refund, the call runs, and one outcome transaction applies what the
 * PSP said (guarded on PENDING, so a second outcome for the same refund changes nothing). A command's claim, and its
 * success or decline, share their statements with those of other commands that come at the same time ({@link
 * StatementBatcher}; two of one refund never share one).
 */
@ApplicationScoped
public class RefundExecutionService {
    static final String REASON_TOO_LONG = "refund_pending_too_long";
    static final String REASON_REJECTED = "refund_rejected_by_psp";
    /** Who settles, in the resolved operations items' note. */
    private static final String ACTOR = "refunds-worker";

    /** An answer of the PSP, or the reason it is unknown. */
    private record Result(PspOutcome outcome, String unknownReason) {}

    private final Pool pool;
    private final PspClient psp;
    private final RefundRepository refunds;
    private final ConsumedEventRepository consumed;
    private final OperationsQueueRepository operations;
    private final RefundsConfig config;
    private final RefundsMetrics metrics;
    private final TraceHeaders traceHeaders;
    private final StatementBatcher<RefundSettlement.ByEvent, RefundSettlement.Settled> commandSettlements;
    private final StatementBatcher<RefundRequested, RefundRepository.CommandClaim> commandClaims;

    public RefundExecutionService(
            Pool pool,
            PspClient psp,
            RefundRepository refunds,
            ConsumedEventRepository consumed,
            OperationsQueueRepository operations,
            RefundsConfig config,
            RefundsMetrics metrics,
            TraceHeaders traceHeaders) {
        this.pool = pool;
        this.psp = psp;
        this.refunds = refunds;
        this.consumed = consumed;
        this.operations = operations;
        this.config = config;
        this.metrics = metrics;
        this.traceHeaders = traceHeaders;
        String consumer = config.consumerName();
        this.commandSettlements = new StatementBatcher<>(
                batch -> RefundSettlement.settleOnce(pool, consumer, batch),
                config.outcome().maxBatchSize(),
                config.outcome().statementsInFlight(),
                metrics.outcomeBatchSizes(),
                null,
                // a command asks for one refund: this also keeps an event id out of a statement twice
                byEvent -> byEvent.settlement().refundId());
        Duration lease = config.sync().lease();
        this.commandClaims = new StatementBatcher<>(
                batch -> refunds.claimForCommands(pool, consumer, lease, batch),
                config.claim().maxBatchSize(),
                config.claim().statementsInFlight(),
                metrics.claimBatchSizes(),
                null,
                RefundRequested::refundId);
    }

    /**
     * Executes one {@code RefundRequested} command. Completes once the outcome is committed (including "still
     * unknown, rescheduled for the sync", and "another claim holds the lease": then the PSP is not called, and the
     * lease holder or the sync finishes the refund); fails with {@link InvalidCommandException} for a command that
     * can never be executed, or with the database's error.
     */
    public Uni<Void> execute(RefundRequested command) {
        return claimFor(command).flatMap(refund -> {
            if (refund == null) {
                return Uni.createFrom().voidItem();
            }
            return psp.refund(refund)
                    .map(outcome -> new Result(outcome, null))
                    .onFailure()
                    .recoverWithItem(e -> new Result(null, describe(e)))
                    .flatMap(result -> apply(refund, result, command.eventId()));
        });
    }

    /**
     * Re-checks due PENDING refunds: asks the PSP by reference and re-sends with the same key when the PSP never got
     * the refund. Up to {@code refunds.sync.concurrency} payments at once, a payment's refunds one after the other in
     * the batch's order (as its lane runs them), so that a batch ends well inside its lease. Once {@code stopping}
     * says so, the refunds of the batch not yet sent are given back instead ({@link RefundRepository#release}). Returns
     * how many refunds it claimed.
     */
    public Uni<Integer> syncDue(BooleanSupplier stopping) {
        RefundsConfig.Sync sync = config.sync();
        return pool.withTransaction(
                        conn -> refunds.claimDue(conn, sync.batchSize(), sync.lease(), sync.unscheduledAfter()))
                .flatMap(batch -> batch.isEmpty()
                        ? Uni.createFrom().item(0)
                        : Multi.createFrom()
                                .iterable(byPayment(batch))
                                .onItem()
                                .transformToUni(ofOnePayment -> resyncInOrder(ofOnePayment, stopping))
                                .merge(sync.concurrency())
                                .collect()
                                .last()
                                .replaceWith(batch.size()));
    }

    private static Collection<List<Refund>> byPayment(List<Refund> batch) {
        return batch.stream()
                .collect(Collectors.groupingBy(Refund::paymentId, LinkedHashMap::new, Collectors.toList()))
                .values();
    }

    private Uni<Void> resyncInOrder(List<Refund> refundsOfOnePayment, BooleanSupplier stopping) {
        return Multi.createFrom()
                .iterable(refundsOfOnePayment)
                .onItem()
                .transformToUniAndConcatenate(refund ->
                        Uni.createFrom().deferred(() -> stopping.getAsBoolean() ? release(refund) : resync(refund)))
                .collect()
                .last()
                .replaceWithVoid();
    }

    private Uni<Void> resync(Refund refund) {
        return psp.lookup(refund)
                .flatMap(found -> found instanceof PspOutcome.NotFound
                        ? psp.refund(refund)
                        : Uni.createFrom().item(found))
                .map(outcome -> new Result(outcome, null))
                .onFailure()
                .recoverWithItem(e -> new Result(null, describe(e)))
                .flatMap(result -> apply(refund, result, null))
                // One refund's database failure must not stop the batch; its lease expires and it comes back.
                .onFailure()
                .recoverWithItem(e -> {
                    Log.errorf(e, "refund %s: sync attempt %d not recorded", refund.id(), refund.attempts());
                    return null;
                });
    }

    /** Gives back a claimed refund that was not sent (the worker is stopping): due at once, its attempt not counted. */
    private Uni<Void> release(Refund refund) {
        return refunds.release(pool, refund.id()).replaceWithVoid().onFailure().recoverWithItem(e -> {
            // its lease expires and it comes back
            Log.errorf(e, "refund %s: claim not given back", refund.id());
            return null;
        });
    }

    /**
     * Leaves the refund of a command to the pending-refund sync instead of executing it here: after the same checks as
     * {@link #execute} (a known event, an unknown refund or a disagreeing command, a final refund), one guarded
     * statement makes a PENDING refund that nobody scheduled due at once. Returns whether it did; false when the
     * command needs nothing (a lease or a retry already owns the refund, or it is final). Records no event id: the row
     * says what is left to do, as for a command whose claim lost.
     */
    public Uni<Boolean> handOff(RefundRequested command) {
        return pool.withTransaction(conn -> consumed.seen(conn, config.consumerName(), command.eventId())
                .flatMap(seen -> seen ? Uni.createFrom().nullItem() : pendingFor(conn, command))
                .flatMap(refund ->
                        refund == null ? Uni.createFrom().item(false) : refunds.scheduleNow(conn, refund.id())));
    }

    /**
     * Claims the refund of a fresh command in one statement (shared with other commands' claims), or returns null when
     * there is nothing to execute; fails with {@link InvalidCommandException} as {@link #pendingFor} does.
     */
    private Uni<Refund> claimFor(RefundRequested command) {
        return commandClaims.submit(command).flatMap(claim -> {
            Refund found = claim.refund();
            if (claim.applied()) {
                return Uni.createFrom().nullItem();
            }
            Uni<Refund> invalid = invalid(command, found);
            if (invalid != null) {
                return invalid;
            }
            if (!found.pending()) {
                return finalRefund(pool, command, found);
            }
            if (!claim.claimed()) {
                // Not recorded as consumed: the row, not this record, says what is left to do.
                Log.infof(
                        "refund %s not claimed (another claim holds its lease, its retry is not due, or it just"
                                + " became final): command %s acknowledged, the pending-refund sync completes it",
                        found.id(), command.eventId());
                return Uni.createFrom().nullItem();
            }
            return Uni.createFrom().item(found);
        });
    }

    /**
     * The PENDING refund of a fresh command; null (the event id recorded) when the refund is final; fails with
     * {@link InvalidCommandException} for an unknown refund or a command that disagrees with it.
     */
    private Uni<Refund> pendingFor(SqlClient conn, RefundRequested command) {
        return refunds.find(conn, command.refundId()).flatMap(found -> {
            Uni<Refund> invalid = invalid(command, found);
            if (invalid != null) {
                return invalid;
            }
            return found.pending() ? Uni.createFrom().item(found) : finalRefund(conn, command, found);
        });
    }

    /** An {@link InvalidCommandException} for an unknown refund or a command that disagrees with it, else null. */
    private static Uni<Refund> invalid(RefundRequested command, Refund found) {
        if (found == null) {
            return Uni.createFrom().failure(new InvalidCommandException("unknown refund " + command.refundId()));
        }
        String mismatch = mismatch(command, found);
        if (mismatch != null) {
            return Uni.createFrom()
                    .failure(new InvalidCommandException(
                            "command " + command.eventId() + " disagrees with refund " + found.id() + ": " + mismatch));
        }
        return null;
    }

    /** The command of a refund already final: its event id recorded, nothing to execute. */
    private Uni<Refund> finalRefund(SqlClient client, RefundRequested command, Refund found) {
        Log.infof("refund %s is %s: command %s ignored", found.id(), found.status(), command.eventId());
        return consumed.record(client, config.consumerName(), command.eventId()).replaceWith((Refund) null);
    }

    private static String mismatch(RefundRequested command, Refund refund) {
        if (!refund.paymentId().equals(command.paymentId())) {
            return "paymentId";
        }
        if (!refund.merchantId().equals(command.merchantId())) {
            return "merchantId";
        }
        if (refund.amount() != command.amount()) {
            return "amount";
        }
        if (!refund.currency().equals(command.currency())) {
            return "currency";
        }
        if (!Objects.equals(refund.chargeReference(), command.pspChargeReference())) {
            return "pspChargeReference";
        }
        return null;
    }

    /**
     * Records the outcome; {@code eventId} (null for the sync) is recorded as consumed with it, atomically. A PSP
     * success or decline is one statement ({@link RefundSettlement}; a command's may carry other refunds' outcomes
     * too); anything else one transaction. Completes once it committed; then the outcome it applied is counted
     * ({@link RefundsMetrics#outcome}).
     */
    private Uni<Void> apply(Refund refund, Result result, UUID eventId) {
        PspOutcome outcome = result.outcome();
        Uni<String> applied;
        if (outcome instanceof PspOutcome.Succeeded s) {
            applied = settle(refund, eventId, "SUCCEEDED", s.pspReference(), null);
        } else if (outcome instanceof PspOutcome.Failed f) {
            applied = settle(refund, eventId, "FAILED", null, f.failureCode());
        } else {
            applied = pool.withTransaction(conn -> {
                Uni<Boolean> fresh = eventId == null
                        ? Uni.createFrom().item(true)
                        : consumed.record(conn, config.consumerName(), eventId);
                return fresh.flatMap(first -> {
                    if (!first) {
                        appliedBefore(refund, eventId);
                        return Uni.createFrom().nullItem();
                    }
                    if (outcome == null) {
                        return reschedule(conn, refund, "unknown", result.unknownReason(), null);
                    }
                    if (outcome instanceof PspOutcome.Rejected r) {
                        return reschedule(conn, refund, "rejected", "PSP rejected the refund: " + r.detail(), r);
                    }
                    if (outcome instanceof PspOutcome.Pending) {
                        return reschedule(conn, refund, "pending", "PSP refund pending", null);
                    }
                    return reschedule(conn, refund, "not_found", "PSP does not know the refund", null);
                });
            });
        }
        return applied.invoke(counted -> {
                    if (counted != null) {
                        metrics.outcome(counted);
                    }
                })
                .replaceWithVoid();
    }

    private static void appliedBefore(Refund refund, UUID eventId) {
        Log.infof("refund %s: command %s was applied concurrently", refund.id(), eventId);
    }

    /**
     * SUCCEEDED or FAILED through {@code settle_refund}, with the command's event id when there is one. Per refund,
     * so at DEBUG: {@code refunds_outcomes_total} counts them.
     */
    private Uni<String> settle(Refund refund, UUID eventId, String status, String pspReference, String failureCode) {
        RefundSettlement settlement =
                new RefundSettlement(refund.id(), status, pspReference, failureCode, ACTOR, traceHeaders.current());
        Uni<RefundSettlement.Settled> settled = eventId == null
                ? settlement
                        .settle(pool)
                        .map(done -> done ? RefundSettlement.Settled.SETTLED : RefundSettlement.Settled.NOT_PENDING)
                : commandSettlements.submit(new RefundSettlement.ByEvent(settlement, eventId));
        return settled.map(done -> switch (done) {
            case EVENT_APPLIED_BEFORE -> {
                appliedBefore(refund, eventId);
                yield null;
            }
            case NOT_PENDING -> {
                Log.infof("refund %s: already final, PSP answer %s not applied again", refund.id(), status);
                yield null;
            }
            case SETTLED -> {
                Log.debugf(
                        "refund %s PENDING -> %s (attempt %d, %s)",
                        refund.id(), status, refund.attempts(), pspReference != null ? pspReference : failureCode);
                yield status.equals("SUCCEEDED") ? "succeeded" : "failed";
            }
        });
    }

    /**
     * Unknown or rejected: the refund stays PENDING with its reservation; the sync tries again later. Returns
     * {@code outcome} once rescheduled, null when the refund was no longer PENDING.
     */
    private Uni<String> reschedule(
            SqlClient conn, Refund refund, String outcome, String reason, PspOutcome.Rejected rejected) {
        RefundsConfig.Retry retry = config.retry();
        return refunds.reschedule(
                        conn, refund.id(), reason, retry.initialBackoff(), retry.maxBackoff(), retry.escalateAfter())
                .flatMap(rescheduled -> {
                    if (rescheduled == null) {
                        return Uni.createFrom().<String>nullItem();
                    }
                    Log.warnf(
                            "refund %s PENDING -> PENDING (attempt %d): %s",
                            refund.id(), rescheduled.attempts(), reason);
                    JsonObject details = new JsonObject()
                            .put("paymentId", refund.paymentId().toString())
                            .put("amount", refund.amount())
                            .put("currency", refund.currency())
                            .put("attempts", rescheduled.attempts())
                            .put("lastError", reason);
                    if (rejected != null) {
                        return operations
                                .escalateRefund(conn, refund.id(), REASON_REJECTED, details)
                                .replaceWith(outcome);
                    }
                    if (rescheduled.overdue()) {
                        return operations
                                .escalateRefund(conn, refund.id(), REASON_TOO_LONG, details)
                                .invoke(opened -> {
                                    if (opened) {
                                        Log.errorf("refund %s still PENDING at its deadline: escalated", refund.id());
                                    }
                                })
                                .replaceWith(outcome);
                    }
                    return Uni.createFrom().item(outcome);
                });
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
