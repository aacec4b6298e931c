package com.payments.recon;

import static com.payments.recon.Fixture.at;
import static com.payments.recon.Fixture.charge;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.recon.service.ReconciliationService;
import com.payments.recon.service.RunResult;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Manual captures (issue 42) against the settlement file, with real PostgreSQL and payments moved through the schema's
 * state machine (V98): a capture settles at its captured amount, in the sandbox's file and in Stripe's report; an
 * authorization, a void and an expiry move no money and are never missing at the PSP; a line for a payment that is
 * not captured is a status mismatch, also while its capture is in flight (the resolver's, not the reconciler's).
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
class ManualCaptureReconciliationTest {
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

    @Test
    void aPartialCaptureMatchesAtTheCapturedAmountAndOneSettledInFullIsABreak() {
        LocalDate d = LocalDate.of(2032, 3, 10);
        String partial = fx.manual("CAPTURED", 1_000, 600, "EUR", at(d, "10:00"));
        String whole = fx.manual("CAPTURED", 2_000, 2_000, "EUR", at(d, "11:00"));
        String settledInFull = fx.manual("CAPTURED", 1_000, 400, "EUR", at(d, "12:00"));
        // Recorded two days before D, settled in D's file (looked up by id, outside the window): compared the same way.
        String earlierPartial = fx.manual("CAPTURED", 5_000, 3_000, "EUR", at(d.minusDays(2), "10:00"));
        String earlierSettledInFull = fx.manual("CAPTURED", 5_000, 2_500, "EUR", at(d.minusDays(2), "11:00"));
        fx.writeFile(
                d,
                List.of(
                        charge(partial, 600, "EUR", at(d, "10:00")),
                        charge(whole, 2_000, "EUR", at(d, "11:00")),
                        charge(settledInFull, 1_000, "EUR", at(d, "12:00")),
                        charge(earlierPartial, 3_000, "EUR", at(d, "13:00")),
                        charge(earlierSettledInFull, 5_000, "EUR", at(d, "14:00"))));

        RunResult result = run(d, fx.source());

        assertThat(breaks(d))
                .containsExactlyInAnyOrder(
                        "AMOUNT_MISMATCH " + settledInFull + " ours 400 PSP 1000",
                        "AMOUNT_MISMATCH " + earlierSettledInFull + " ours 2500 PSP 5000");
        assertThat(result.summary().match().outcomes())
                .isEqualTo(Map.of("MATCHED", 2L, "MATCHED_OUTSIDE_WINDOW", 1L, "AMOUNT_MISMATCH", 2L));
        assertThat(result.summary().match().matchedAmounts()).isEqualTo(Map.of("EUR", 600L + 2_000 + 3_000));
    }

    @Test
    void authorizationsVoidsAndExpiriesAreNeverMissingAtThePsp() {
        // Today: the payments' every timestamp (created, authorized, updated) is inside the date reconciled.
        LocalDate d = LocalDate.now(ZoneOffset.UTC);
        List<String> notCaptured = new ArrayList<>();
        for (String status :
                List.of("AUTHORIZING", "AUTHORIZED", "CAPTURING", "CANCELING", "CANCELED", "EXPIRING", "EXPIRED")) {
            notCaptured.add(fx.manual(status, 1_000, 500, "EUR", null));
        }
        Instant now = Instant.now();
        String captured = fx.manual("CAPTURED", 1_000, 700, "EUR", now);
        fx.writeFile(d, List.of(charge(captured, 700, "EUR", now)));

        RunResult result = run(d, fx.source());

        assertThat(breaks(d)).isEmpty();
        assertThat(result.summary().match().outcomes()).isEqualTo(Map.of("MATCHED", 1L));
        // and the run moved none of them
        assertThat(fx.rows("SELECT string_agg(status, ',' ORDER BY status) FROM payments WHERE id IN ('"
                        + String.join("', '", notCaptured) + "')"))
                .containsExactly(List.of("AUTHORIZED,AUTHORIZING,CANCELED,CANCELING,CAPTURING,EXPIRED,EXPIRING"));
    }

    @Test
    void aLineForAPaymentNotCapturedIsAStatusMismatchAndTheRunLeavesTheCaptureInFlightAlone() {
        LocalDate d = LocalDate.of(2032, 4, 10);
        String authorized = fx.manual("AUTHORIZED", 1_000, 0, "EUR", null);
        String canceled = fx.manual("CANCELED", 1_000, 0, "EUR", null);
        String expired = fx.manual("EXPIRED", 1_000, 0, "EUR", null);
        // In flight like PROCESSING: the resolver records its outcome (ledger, event, the capture's key), not the run.
        String capturing = fx.manual("CAPTURING", 1_000, 600, "EUR", null);
        String processing = fx.payment("PROCESSING", 800, "EUR");
        fx.writeFile(
                d,
                List.of(
                        charge(authorized, 1_000, "EUR", at(d, "10:00")),
                        charge(canceled, 1_000, "EUR", at(d, "11:00")),
                        charge(expired, 1_000, "EUR", at(d, "12:00")),
                        charge(capturing, 600, "EUR", at(d, "13:00")),
                        charge(processing, 800, "EUR", at(d, "14:00"))));

        run(d, fx.source());

        assertThat(breaks(d))
                .containsExactlyInAnyOrder(
                        "STATUS_MISMATCH " + authorized + " ours 1000 PSP 1000",
                        "STATUS_MISMATCH " + canceled + " ours 1000 PSP 1000",
                        "STATUS_MISMATCH " + expired + " ours 1000 PSP 1000",
                        "STATUS_MISMATCH " + capturing + " ours 600 PSP 600",
                        "STATUS_MISMATCH " + processing + " ours 800 PSP 800");
        assertThat(fx.rows(
                        """
                        SELECT details->>'status', details->>'amount' FROM operations_queue
                         WHERE reason = 'RECON_STATUS_MISMATCH' AND subject_id = ?
                        """,
                        capturing))
                .containsExactly(List.of("CAPTURING", "600"));
        assertThat(fx.rows("SELECT status, captured_amount FROM payments WHERE id = ?::uuid", capturing))
                .containsExactly(List.of("CAPTURING", "600"));
        assertThat(fx.rows(
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'CAPTURE' AND reference = ?", capturing))
                .containsExactly(List.of("0"));
        assertThat(fx.rows("SELECT count(*) FROM outbox WHERE key = ?", capturing))
                .containsExactly(List.of("0"));
    }

    @Test
    void stripesReportSettlesAPartialCaptureAtTheCapturedAmount() throws Exception {
        LocalDate d = LocalDate.of(2032, 5, 10);
        String partial = fx.manual("CAPTURED", 1_000, 600, "EUR", at(d, "10:00"));
        String settledInFull = fx.manual("CAPTURED", 1_000, 400, "EUR", at(d, "11:00"));
        // Stripe's itemized payout reconciliation report (major units): the charge of a PaymentIntent captured with
        // amount_to_capture is its captured amount.
        java.nio.file.Files.writeString(
                fx.file(d),
                "balance_transaction_id,automatic_payout_id,created_utc,currency,gross,fee,net,reporting_category,"
                        + "source_id,description,payment_intent_id,customer_facing_amount,payment_metadata[payment_id],"
                        + "refund_metadata[refund_id]\n"
                        + "txn_1,po_1," + d + " 10:00:00,eur,6.00,0.47,5.53,charge,ch_1,,pi_1,," + partial + ",\n"
                        + "txn_2,po_1," + d + " 11:00:00,eur,10.00,0.59,9.41,charge,ch_2,,pi_2,," + settledInFull
                        + ",\n");

        RunResult result = run(d, fx.source());

        assertThat(breaks(d)).containsExactly("AMOUNT_MISMATCH " + settledInFull + " ours 400 PSP 1000");
        assertThat(result.summary().match().outcomes()).isEqualTo(Map.of("MATCHED", 1L, "AMOUNT_MISMATCH", 1L));
        assertThat(result.summary().match().matchedAmounts()).isEqualTo(Map.of("EUR", 600L));
    }

    private RunResult run(LocalDate date, String source) {
        RunResult result = service.run(date, source, WINDOW);
        assertThat(result.status()).as("%s", result.summary()).isEqualTo(RunResult.SUCCEEDED);
        return result;
    }

    /** The date's breaks as "TYPE reference ours <internal> PSP <psp>". */
    private List<String> breaks(LocalDate d) {
        return fx
                .rows(
                        """
                        SELECT break_type || ' ' || reference || ' ours ' || coalesce(internal_amount::text, '-')
                               || ' PSP ' || coalesce(psp_amount::text, '-')
                          FROM recon_breaks WHERE business_date = ?::date
                        """,
                        d.toString())
                .stream()
                .map(row -> row.get(0))
                .toList();
    }
}
