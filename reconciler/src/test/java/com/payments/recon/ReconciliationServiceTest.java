package com.payments.recon;

import static com.payments.recon.Fixture.at;
import static com.payments.recon.Fixture.charge;
import static com.payments.recon.Fixture.fee;
import static com.payments.recon.Fixture.refundLine;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.recon.Fixture.Line;
import com.payments.recon.service.ReconciliationService;
import com.payments.recon.service.RunResult;
import com.payments.recon.service.RunSummary;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class ReconciliationServiceTest {
    static final Duration WINDOW = Duration.ofMinutes(15);

    @Inject
    ReconciliationService service;

    @Inject
    DataSource dataSource;

    Fixture fx;

    @BeforeEach
    void setUp() {
        fx = new Fixture(dataSource);
    }

    RunResult run(LocalDate date) {
        RunResult result = service.run(date, fx.source(), WINDOW);
        assertThat(result.status()).as("%s", result.summary()).isEqualTo(RunResult.SUCCEEDED);
        return result;
    }

    List<String> breaks(LocalDate date, String status) {
        return fx
                .rows(
                        "SELECT break_type || ' ' || reference FROM recon_breaks WHERE business_date = ?::date"
                                + " AND status = ? ORDER BY 1",
                        date.toString(),
                        status)
                .stream()
                .map(r -> r.get(0))
                .toList();
    }

    @Test
    void generatedDayGivesExactlyTheInjectedBreaksAndBooksFees() {
        LocalDate d = LocalDate.of(2031, 3, 10);
        Random random = new Random(42);
        List<Line> lines = new ArrayList<>();
        long eurFees = 0;
        for (int i = 0; i < 40; i++) {
            long amount = 100 + random.nextInt(100_000);
            var when = at(d, "00:20").plusSeconds(random.nextInt(23 * 3600));
            String id = fx.captured(amount, "EUR", when);
            lines.add(charge(id, amount, "EUR", when.plusSeconds(1)));
            eurFees += fee(amount);
            if (i % 10 == 0) {
                String refund = fx.refund(id, amount / 2, "EUR", when.plusSeconds(60));
                lines.add(refundLine(refund, amount / 2, "EUR", when.plusSeconds(61)));
            }
        }
        String missingAtPsp = fx.captured(5_000, "EUR", at(d, "12:00"));
        String refundedPayment = fx.captured(7_000, "EUR", at(d, "09:00"));
        lines.add(charge(refundedPayment, 7_000, "EUR", at(d, "09:00")));
        eurFees += fee(7_000);
        String missingRefund = fx.refund(refundedPayment, 1_000, "EUR", at(d, "13:00"));
        String phantom = UUID.randomUUID().toString();
        lines.add(charge(phantom, 4_200, "EUR", at(d, "14:00")));
        eurFees += fee(4_200);
        String amountMismatch = fx.captured(1_000, "EUR", at(d, "10:00"));
        lines.add(charge(amountMismatch, 1_001, "EUR", at(d, "10:00")));
        eurFees += fee(1_001);
        String currencyMismatch = fx.captured(2_000, "EUR", at(d, "11:00"));
        lines.add(charge(currencyMismatch, 2_000, "USD", at(d, "11:00")));
        long usdFees = fee(2_000);
        String failed = fx.payment("FAILED", 3_000, "EUR");
        lines.add(charge(failed, 3_000, "EUR", at(d, "15:00")));
        eurFees += fee(3_000);
        String unknownOtherAmount = fx.payment("UNKNOWN", 3_000, "EUR");
        lines.add(charge(unknownOtherAmount, 3_100, "EUR", at(d, "16:00")));
        eurFees += fee(3_100);
        String duplicated = fx.captured(6_000, "EUR", at(d, "17:00"));
        lines.add(charge(duplicated, 6_000, "EUR", at(d, "17:00")));
        lines.add(new Line("ch_dup2", "CHARGE", duplicated, 6_000, fee(6_000), "EUR", at(d, "17:01")));
        eurFees += 2 * fee(6_000);
        // Midnight: an item of D-1's last minutes settles in D's file (matched), one of D-1 is in neither file
        // (a break of D, which owns D-1's late items), one of D's last minutes awaits D+1's file (no break yet).
        String lateFromYesterday = fx.captured(8_000, "EUR", at(d.minusDays(1), "23:57"));
        lines.add(charge(lateFromYesterday, 8_000, "EUR", at(d.minusDays(1), "23:57")));
        eurFees += fee(8_000);
        String lateFromYesterdayMissing = fx.captured(8_100, "EUR", at(d.minusDays(1), "23:56"));
        String lateToday = fx.captured(9_000, "EUR", at(d, "23:58"));
        // A chargeback is a break and goes to humans; a FEE line and every line's fee go to the ledger.
        lines.add(new Line("cb_1", "CHARGEBACK", refundedPayment, 7_000, 1_500, "EUR", at(d, "18:00")));
        lines.add(new Line("fee_1", "FEE", null, 500, 0, "EUR", at(d, "23:00")));
        eurFees += 1_500 + 500;
        fx.writeFile(d, lines);

        RunResult result = run(d);

        assertThat(breaks(d, "OPEN"))
                .containsExactlyInAnyOrder(
                        "MISSING_AT_PSP " + missingAtPsp,
                        "MISSING_AT_PSP " + missingRefund,
                        "MISSING_AT_PSP " + lateFromYesterdayMissing,
                        "MISSING_INTERNAL " + phantom,
                        "AMOUNT_MISMATCH " + amountMismatch,
                        "CURRENCY_MISMATCH " + currencyMismatch,
                        "STATUS_MISMATCH " + failed,
                        "STATUS_MISMATCH " + unknownOtherAmount,
                        "DUPLICATE_AT_PSP " + duplicated,
                        "CHARGEBACK " + refundedPayment);
        assertThat(fx.rows("SELECT count(*) FROM recon_breaks WHERE business_date = ?::date", d.toString()))
                .containsExactly(List.of("10"));
        RunSummary.Match s = result.summary().match();
        assertThat(s.matched()).isEqualTo(40L + 4 + 2); // 40 charges, 4 refunds, refundedPayment, late item
        assertThat(s.awaitingNextFile()).isEqualTo(1L);
        assertThat(s.breaks())
                .isEqualTo(Map.of(
                        "MISSING_AT_PSP", 3L,
                        "MISSING_INTERNAL", 1L,
                        "AMOUNT_MISMATCH", 1L,
                        "CURRENCY_MISMATCH", 1L,
                        "STATUS_MISMATCH", 2L,
                        "DUPLICATE_AT_PSP", 2L, // two lines, one break
                        "CHARGEBACK", 1L));
        assertThat(result.reportedOpen()).isZero();

        // Fees: one balanced FEE transaction per currency.
        assertThat(fx.rows(
                        """
                        SELECT e.currency, e.account, e.amount FROM ledger_transactions t
                          JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'FEE' AND t.reference LIKE 'settlement-fees:' || ? || ':%'
                         ORDER BY 1, 2
                        """,
                        d.toString()))
                .containsExactly(
                        List.of("EUR", "psp_fees", Long.toString(eurFees)),
                        List.of("EUR", "psp_receivable", Long.toString(-eurFees)),
                        List.of("USD", "psp_fees", Long.toString(usdFees)),
                        List.of("USD", "psp_receivable", Long.toString(-usdFees)));
        // Humans get the uncertain cases; the UNKNOWN with another amount is not touched.
        assertThat(fx.rows(
                        "SELECT reason, subject_id FROM operations_queue WHERE subject_id IN (?, ?, ?) ORDER BY 1, 2",
                        failed,
                        unknownOtherAmount,
                        refundedPayment))
                .containsExactlyInAnyOrder(
                        List.of("PSP_CHARGEBACK", refundedPayment),
                        List.of("RECON_STATUS_MISMATCH", failed),
                        List.of("RECON_STATUS_MISMATCH", unknownOtherAmount));
        assertThat(fx.queryOne("SELECT status FROM payments WHERE id = ?::uuid", unknownOtherAmount))
                .isEqualTo("UNKNOWN");

        // D+1's file carries D's late item: matched there, not MISSING_INTERNAL, and no break for D either.
        LocalDate next = d.plusDays(1);
        String tomorrow = fx.captured(1_234, "EUR", at(next, "08:00"));
        fx.writeFile(
                next,
                List.of(
                        charge(lateToday, 9_000, "EUR", at(d, "23:58")),
                        charge(tomorrow, 1_234, "EUR", at(next, "08:00"))));
        RunResult nextRun = run(next);
        assertThat(nextRun.summary().match().matched()).isEqualTo(2L);
        assertThat(fx.rows("SELECT count(*) FROM recon_breaks WHERE business_date = ?::date", next.toString()))
                .containsExactly(List.of("0"));
        assertThat(fx.rows("SELECT count(*) FROM recon_breaks WHERE reference = ?", lateToday))
                .containsExactly(List.of("0"));
    }

    @Test
    void persistentBreakIsReportedOnTheSecondRunAndAFixedOneIsResolved() {
        LocalDate d = LocalDate.of(2031, 4, 10);
        String persistent = fx.captured(1_000, "EUR", at(d, "10:00"));
        String fixedLater = fx.captured(2_000, "EUR", at(d, "11:00"));
        String fine = fx.captured(3_000, "EUR", at(d, "12:00"));
        fx.writeFile(d, List.of(charge(fine, 3_000, "EUR", at(d, "12:00"))));

        RunResult first = run(d);
        assertThat(breaks(d, "OPEN"))
                .containsExactlyInAnyOrder("MISSING_AT_PSP " + persistent, "MISSING_AT_PSP " + fixedLater);
        assertThat(first.reportedOpen()).isZero();

        // The PSP re-issues the file with the missing charge; the next day's run sees it.
        fx.writeFile(
                d,
                List.of(charge(fine, 3_000, "EUR", at(d, "12:00")), charge(fixedLater, 2_000, "EUR", at(d, "11:00"))));
        fx.passTime(Duration.ofDays(1));
        RunResult second = run(d);
        assertThat(breaks(d, "REPORTED")).containsExactly("MISSING_AT_PSP " + persistent);
        assertThat(breaks(d, "OPEN")).isEmpty();
        assertThat(breaks(d, "RESOLVED")).containsExactly("MISSING_AT_PSP " + fixedLater);
        assertThat(second.reportedOpen()).isEqualTo(1);
        assertThat(second.summary().match().newlyReported()).isEqualTo(1);
        assertThat(fx.rows(
                        "SELECT times_seen, reported_at IS NOT NULL FROM recon_breaks WHERE reference = ?", persistent))
                .containsExactly(List.of("2", "t"));
        assertThat(fx.rows(
                        "SELECT resolved_at IS NOT NULL, resolution FROM recon_breaks WHERE reference = ?", fixedLater))
                .containsExactly(List.of("t", "not seen by run " + second.runId() + "; now MATCHED"));

        // A third run changes nothing but its own bookkeeping.
        List<List<String>> before = fx.snapshot();
        RunResult third = run(d);
        assertThat(fx.snapshot()).isEqualTo(before);
        assertThat(third.reportedOpen()).isEqualTo(1);
        assertThat(third.summary().match().newlyReported()).isEqualTo(0);
    }

    @Test
    void aRetryMinutesLaterIsNotTheSecondSightingButTheNextDaysRunIs() {
        LocalDate d = LocalDate.of(2031, 4, 20);
        String persistent = fx.captured(1_000, "EUR", at(d, "10:00"));
        String comesBack = fx.captured(2_000, "EUR", at(d, "11:00"));
        fx.writeFile(d, List.of());

        // The first run and its retry (a Job retry or a manual re-run minutes later): seen twice, not reported.
        run(d);
        RunResult retry = run(d);
        assertThat(breaks(d, "OPEN"))
                .containsExactlyInAnyOrder("MISSING_AT_PSP " + persistent, "MISSING_AT_PSP " + comesBack);
        assertThat(retry.reportedOpen()).isZero();
        assertThat(retry.summary().match().newlyReported()).isEqualTo(0);

        // The next day's run counts: reported. A break resolved in between and seen again starts over.
        fx.writeFile(d, List.of(charge(comesBack, 2_000, "EUR", at(d, "11:00"))));
        fx.passTime(Duration.ofHours(23));
        RunResult nextDay = run(d);
        assertThat(breaks(d, "REPORTED")).containsExactly("MISSING_AT_PSP " + persistent);
        assertThat(breaks(d, "RESOLVED")).containsExactly("MISSING_AT_PSP " + comesBack);
        assertThat(nextDay.reportedOpen()).isEqualTo(1);
        assertThat(nextDay.summary().match().newlyReported()).isEqualTo(1);

        fx.writeFile(d, List.of());
        fx.passTime(Duration.ofHours(23));
        run(d); // reopened
        RunResult reopenedRetry = run(d);
        assertThat(breaks(d, "OPEN")).containsExactly("MISSING_AT_PSP " + comesBack);
        assertThat(reopenedRetry.summary().match().newlyReported()).isEqualTo(0);
        fx.passTime(Duration.ofHours(23));
        assertThat(run(d).summary().match().newlyReported()).isEqualTo(1);
        assertThat(breaks(d, "REPORTED"))
                .containsExactlyInAnyOrder("MISSING_AT_PSP " + persistent, "MISSING_AT_PSP " + comesBack);
    }

    @Test
    void unknownPaymentSettledByThePspIsCapturedOnceWithLedgerOutboxAndAudit() {
        LocalDate d = LocalDate.of(2031, 5, 10);
        String unknown = fx.payment("UNKNOWN", 4_321, "EUR");
        fx.rows("UPDATE payments SET metadata = '{\"customer\": \"c-81\"}' WHERE id = ?::uuid RETURNING id", unknown);
        fx.writeFile(d, List.of(new Line("ch_psp1", "CHARGE", unknown, 4_321, fee(4_321), "EUR", at(d, "09:30"))));

        RunResult result = run(d);

        assertThat(result.summary().match().capturedUnknown()).isEqualTo(1);
        assertThat(fx.rows(
                        "SELECT status, psp_reference, captured_at = ?::timestamptz FROM payments WHERE id = ?::uuid",
                        at(d, "09:30").toString(),
                        unknown))
                .containsExactly(List.of("CAPTURED", "ch_psp1", "t"));
        assertThat(fx.rows(
                        "SELECT from_status, to_status, actor FROM payment_transitions WHERE payment_id = ?::uuid",
                        unknown))
                .containsExactly(List.of("UNKNOWN", "CAPTURED", "reconciler"));
        assertThat(fx.rows(
                        """
                        SELECT e.account, e.amount, e.currency FROM ledger_transactions t
                          JOIN ledger_entries e ON e.transaction_id = t.id
                         WHERE t.kind = 'CAPTURE' AND t.reference = ? ORDER BY e.account
                        """,
                        unknown))
                .containsExactly(List.of("merchant_payable", "-4321", "EUR"), List.of("psp_receivable", "4321", "EUR"));
        assertThat(fx.rows(
                        """
                        SELECT event_type, topic, key, payload->>'paymentId', payload->>'type', (payload->>'amount')::bigint,
                               payload->>'pspReference', payload->>'eventId' = event_id::text,
                               payload->'metadata' = '{"customer": "c-81"}'::jsonb
                          FROM outbox WHERE key = ?
                        """,
                        unknown))
                .containsExactly(List.of(
                        "PaymentCaptured",
                        "payment-events",
                        unknown,
                        unknown,
                        "PaymentCaptured",
                        "4321",
                        "ch_psp1",
                        "t",
                        "t"));
        assertThat(fx.rows("SELECT count(*) FROM recon_breaks WHERE business_date = ?::date", d.toString()))
                .containsExactly(List.of("0"));

        // Re-running the date: same result, no second event, no second ledger transaction, same tables.
        List<List<String>> before = fx.snapshot();
        RunResult again = run(d);
        assertThat(fx.snapshot()).isEqualTo(before);
        assertThat(again.summary().match().capturedUnknown()).isEqualTo(0);
        assertThat(again.summary().match().matched()).isEqualTo(1L);
    }

    @Test
    void malformedFileFailsWithItsLineNumberAndChangesNothing() {
        LocalDate d = LocalDate.of(2031, 6, 10);
        String ok = fx.captured(1_000, "EUR", at(d, "10:00"));
        String missing = fx.captured(2_000, "EUR", at(d, "11:00"));
        fx.writeFile(d, List.of(charge(ok, 1_000, "EUR", at(d, "10:00"))));
        run(d);
        List<List<String>> before = fx.snapshot();

        String other = UUID.randomUUID().toString();
        fx.writeRaw(
                d,
                "psp_reference,type,reference,amount,fee,currency,settled_at\n"
                        + charge(ok, 1_000, "EUR", at(d, "10:00")).csv() + "\n"
                        + charge(missing, 2_000, "EUR", at(d, "11:00")).csv() + "\n"
                        + "ch_x,CHARGE," + other + ",12x,0,EUR,2031-06-10T12:00:00Z\n"
                        + charge(other, 5, "EUR", at(d, "13:00")).csv() + "\n");
        RunResult failed = service.run(d, fx.source(), WINDOW);

        assertThat(failed.status()).isEqualTo(RunResult.FAILED);
        assertThat(failed.summary().line()).isEqualTo(4L);
        assertThat(failed.summary().error()).contains("line 4").contains("amount");
        assertThat(fx.snapshot()).isEqualTo(before);
        assertThat(fx.rows("SELECT status, summary->>'line' FROM recon_runs WHERE id = ?", failed.runId()))
                .containsExactly(List.of("FAILED", "4"));

        RunResult unavailable = service.run(d.plusDays(5), fx.source(), WINDOW);
        assertThat(unavailable.status()).isEqualTo(RunResult.FAILED);
    }

    @Test
    void aSecondRunOfTheSameDateDoesNotProceedWhileTheFirstHoldsTheLock() throws Exception {
        LocalDate d = LocalDate.of(2031, 7, 10);
        fx.writeFile(d, List.of());
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(?, ?)")) {
                ps.setInt(1, 0x5245_434E);
                ps.setInt(2, (int) d.toEpochDay());
                ps.execute();
            }
            RunResult locked = service.run(d, fx.source(), WINDOW);
            assertThat(locked.status()).isEqualTo(RunResult.LOCKED);
            c.rollback();
        }
        assertThat(fx.rows("SELECT count(*) FROM recon_runs WHERE business_date = ?::date", d.toString()))
                .containsExactly(List.of("0"));
        assertThat(run(d).status()).isEqualTo(RunResult.SUCCEEDED);
    }
}
