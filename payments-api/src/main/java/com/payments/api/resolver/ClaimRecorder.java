package com.payments.api.resolver;

import com.payments.api.PaymentStatus;
import com.payments.api.common.OutboxRow;
import com.payments.api.common.PspCallRepository;
import com.payments.api.common.PspCallRepository.PspCall;
import com.payments.api.payment.PaymentOutcome;
import com.payments.api.payment.PaymentOutcomeService;
import com.payments.api.payment.PaymentOutcomeService.Recorded;
import com.payments.api.payment.PaymentRepository;
import com.payments.api.payment.PaymentRepository.Locked;
import com.payments.api.resolver.ResolverRepository.Claimed;
import com.payments.contracts.tracing.TraceHeaders;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The resolver's transaction of one claim: the payment re-read under its row lock, this attempt's PSP calls written
 * to {@code psp_calls} (also when the claim was lost meanwhile: the calls were made), then the work only if the claim
 * still owns the payment; outcomes recorded through {@link PaymentOutcomeService} with the run's trace context.
 */
@ApplicationScoped
public class ClaimRecorder {
    private final Pool pool;
    private final PaymentOutcomeService outcomes;
    private final PspCallRepository pspCalls;
    private final PaymentRepository payments;
    private final TraceHeaders traceHeaders;

    public ClaimRecorder(
            Pool pool,
            PaymentOutcomeService outcomes,
            PspCallRepository pspCalls,
            PaymentRepository payments,
            TraceHeaders traceHeaders) {
        this.pool = pool;
        this.outcomes = outcomes;
        this.pspCalls = pspCalls;
        this.payments = payments;
        this.traceHeaders = traceHeaders;
    }

    /** Runs {@code work} in one transaction under the payment's row lock; "skipped" when the claim lost it. */
    Uni<String> underLock(Claimed claim, List<PspCall> calls, BiFunction<SqlClient, Locked, Uni<String>> work) {
        return pool.withTransaction(conn -> PaymentRepository.lock(conn, claim.id())
                .call(current ->
                        current == null ? Uni.createFrom().voidItem() : pspCalls.insert(conn, claim.id(), calls))
                .flatMap(current -> owns(claim, current)
                        ? work.apply(conn, current)
                        : Uni.createFrom().item("skipped")));
    }

    Uni<Recorded> record(SqlClient conn, PaymentOutcome outcome) {
        return outcomes.record(conn, outcome, traceHeaders.current());
    }

    /** The pending capture or void of a manual payment undone to {@code to} after the PSP refused it. */
    Uni<Boolean> undo(SqlClient conn, Claimed claim, PaymentStatus to, String code) {
        return payments.findAnyMerchant(conn, claim.id()).flatMap(p -> {
            OutboxRow event =
                    to == PaymentStatus.EXPIRED ? outcomes.eventOf(p.moved(to, null), traceHeaders.current()) : null;
            return payments.undoMove(
                    conn,
                    claim.id(),
                    claim.status(),
                    to,
                    claim.attempt(),
                    "declined " + code,
                    event,
                    PaymentResolver.ACTOR,
                    null);
        });
    }

    private static boolean owns(Claimed claim, Locked current) {
        if (current == null || current.status().isFinal() || current.attempts() != claim.attempt()) {
            Log.infof(
                    "Resolver: payment %s attempt %d: %s meanwhile, nothing recorded",
                    claim.id(),
                    claim.attempt(),
                    current == null
                            ? "gone"
                            : current.status().isFinal() ? "resolved " + current.status() : "claimed again");
            return false;
        }
        return true;
    }
}
