package com.payments.recon;

import static com.payments.recon.Fixture.at;
import static com.payments.recon.Fixture.fee;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundQuery;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import com.payments.recon.service.ReconciliationService;
import com.payments.recon.service.RunResult;
import com.payments.recon.service.SettlementSource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reconciliation with {@code psp.provider=stripe} against the sandbox's Stripe mode (started by the test on loopback):
 * the money moves through the Stripe adapter, our side is written by the test, and what differs between the two is
 * exactly the breaks found, from the balance transactions (API) and from the itemized payout reconciliation report.
 */
@QuarkusTest
@TestProfile(StripeReconciliationTest.Stripe.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.RESTRICTED_TO_CLASS)
@WithTestResource(
        value = PspSandboxTestResource.class,
        scope = TestResourceScope.RESTRICTED_TO_CLASS,
        initArgs = @ResourceArg(name = "psp.stripe.refund-failure-delay", value = "200ms"))
class StripeReconciliationTest {
    static final Duration WINDOW = Duration.ofMinutes(15);
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String KEY = "sk_test_reconciler";

    /** The Stripe adapter, as a deployment sets {@code PSP_PROVIDER=stripe} and {@code STRIPE_API_KEY}. */
    public static class Stripe implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("psp.provider", "stripe", "psp.stripe.api-key", KEY);
        }
    }

    @Inject
    ReconciliationService service;

    @Inject
    DataSource dataSource;

    @Inject
    PspPort psp;

    final String sandbox = ConfigProvider.getConfig().getValue("psp.url", String.class);
    Fixture fx;

    @BeforeEach
    void setUp() {
        fx = new Fixture(dataSource);
    }

    @AfterEach
    void releaseClockAndKnobs() {
        given().baseUri(sandbox).delete("/test/clock").then().statusCode(200);
        given().baseUri(sandbox).delete("/test/faults").then().statusCode(200);
    }

    /** What a day at Stripe and in our books looks like; each break is one difference between the two. */
    record Day(List<String> breaks, long fees, String disputed) {}

    /**
     * Charges and refunds made through the Stripe adapter on {@code d} (the sandbox clock frozen there), and our side
     * of them written with the differences to find.
     */
    Day stripeDay(LocalDate d) {
        // Both sides agree: a charge, a refund of it, a disputed charge's charge, a refund that failed at Stripe.
        String matched = UUID.randomUUID().toString();
        String matchedIntent = charge(matched, 10_000, "pm_card_visa", at(d, "10:00"));
        fx.captured(matched, 10_000, "EUR", matchedIntent, at(d, "10:00"));
        String refunded = UUID.randomUUID().toString();
        RefundResult refund = refund(refunded, matched, matchedIntent, 2_500, at(d, "10:30"));
        fx.refund(refunded, matched, 2_500, "EUR", "SUCCEEDED", refund.pspRefundId(), at(d, "10:30"));
        String failingRefundPayment = UUID.randomUUID().toString();
        String failingIntent = charge(failingRefundPayment, 6_000, "pm_card_refundFail", at(d, "11:00"));
        fx.captured(failingRefundPayment, 6_000, "EUR", failingIntent, at(d, "11:00"));
        String failedRefund = UUID.randomUUID().toString();
        RefundResult pending = refund(failedRefund, failingRefundPayment, failingIntent, 6_000, at(d, "11:30"));
        assertThat(pending.status()).isEqualTo(RefundResult.Status.PENDING);
        awaitRefundFailed(
                new RefundRequest(failedRefund, failingRefundPayment, failingIntent, 6_000, "EUR"),
                pending.pspRefundId());
        fx.refund(failedRefund, failingRefundPayment, 6_000, "EUR", "FAILED", pending.pspRefundId(), at(d, "11:31"));

        // A dispute: the charge matches, the chargeback is a break.
        String disputed = UUID.randomUUID().toString();
        String disputedIntent = charge(disputed, 4_000, "pm_card_createDispute", at(d, "12:00"));
        fx.captured(disputed, 4_000, "EUR", disputedIntent, at(d, "12:00"));
        // Captured in our books, never charged at Stripe.
        String missingAtPsp = fx.captured(2_000, "EUR", at(d, "13:00"));
        // Charged at Stripe, not in our books.
        String missingInternal = UUID.randomUUID().toString();
        charge(missingInternal, 3_000, "pm_card_visa", at(d, "14:00"));
        // Stripe charged another amount than the one we recorded.
        String otherAmount = UUID.randomUUID().toString();
        String otherIntent = charge(otherAmount, 5_100, "tok_visa", at(d, "15:00"));
        fx.captured(otherAmount, 5_000, "EUR", otherIntent, at(d, "15:00"));
        // A refund we hold as SUCCEEDED that Stripe never made.
        String refundNeverMade =
                fx.refund(UUID.randomUUID().toString(), matched, 1_000, "EUR", "SUCCEEDED", null, at(d, "16:00"));

        long fees = fee(10_000) + fee(6_000) + fee(4_000) + fee(3_000) + fee(5_100) + 1_500; // + the dispute fee
        return new Day(
                List.of(
                        "CHARGEBACK " + disputed,
                        "MISSING_AT_PSP " + missingAtPsp,
                        "MISSING_INTERNAL " + missingInternal,
                        "AMOUNT_MISMATCH " + otherAmount,
                        "MISSING_AT_PSP " + refundNeverMade),
                fees,
                disputed);
    }

    @Test
    void balanceTransactionsOfTheDayFindEveryInjectedBreak() {
        LocalDate d = LocalDate.of(2034, 5, 10);
        Day day = stripeDay(d);
        // The settlement-file knob, in Stripe mode: a charge balance transaction that names none of our payments.
        faults("{\"settlementPhantom\":1}");

        RunResult result = run(d, SettlementSource.PSP);

        assertThat(result.summary().source()).isEqualTo("psp:stripe");
        List<String> phantom = fx.rows(
                        "SELECT reference, fee FROM psp_settlements WHERE business_date = ?::date AND psp_reference"
                                + " LIKE 'ch_phantom_%'",
                        d.toString())
                .get(0);
        assertThat(breaks(d))
                .containsExactlyInAnyOrderElementsOf(concat(day.breaks(), "MISSING_INTERNAL " + phantom.get(0)));
        assertThat(result.summary().match().outcomes())
                .containsEntry("MATCHED", 4L) // the charge and its refund, the refund-fail charge, the disputed charge
                .containsEntry("REFUND_REVERSED", 2L) // the failed refund's refund and refund_failure lines
                .containsEntry("CHARGEBACK", 1L)
                .doesNotContainKey("STATUS_MISMATCH");
        // Stripe's fees, the dispute fee among them, booked for the day; the dispute is queued for humans as well.
        assertThat(result.summary().match().fees())
                .isEqualTo(Map.of("EUR", day.fees() + Long.parseLong(phantom.get(1))));
        assertThat(fx.rows("SELECT reason FROM operations_queue WHERE subject_id = ? ORDER BY 1", day.disputed()))
                .containsExactly(List.of("PSP_CHARGEBACK"));
        // Our id from the PaymentIntent's metadata, the PaymentIntent's id as the PSP reference (as payments store it).
        assertThat(fx.rows(
                        "SELECT s.psp_reference = p.psp_reference FROM psp_settlements s JOIN payments p"
                                + " ON p.id::text = s.reference WHERE s.business_date = ?::date AND s.type = 'CHARGE'",
                        d.toString()))
                .hasSize(4)
                .allMatch(row -> row.equals(List.of("t")));
    }

    @Test
    void theItemizedPayoutReconciliationReportFindsTheSameBreaks() throws Exception {
        LocalDate d = LocalDate.of(2034, 6, 20);
        Day day = stripeDay(d);
        String report = given().baseUri(sandbox)
                .auth()
                .preemptive()
                .oauth2(KEY)
                .queryParam("payout", "po_sbx_" + d.toString().replace("-", ""))
                .get("/stripe/reports/payout_reconciliation.itemized.csv")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        Files.writeString(fx.file(d), report);

        RunResult result = run(d, fx.source());

        assertThat(breaks(d)).containsExactlyInAnyOrderElementsOf(day.breaks());
        assertThat(result.summary().match().outcomes())
                .containsEntry("MATCHED", 4L)
                .containsEntry("REFUND_REVERSED", 2L);
        assertThat(result.summary().match().fees()).isEqualTo(Map.of("EUR", day.fees()));
    }

    @Test
    void theSettlementFileKnobsDropAndChangeStripesBalanceTransactions() {
        // One charge per date: the knobs pick among a day's transactions, so here they pick that one.
        LocalDate dropDay = LocalDate.of(2034, 7, 1);
        String dropped = UUID.randomUUID().toString();
        fx.captured(
                dropped,
                2_000,
                "EUR",
                charge(dropped, 2_000, "pm_card_visa", at(dropDay, "12:00")),
                at(dropDay, "12:00"));
        LocalDate changeDay = LocalDate.of(2034, 7, 2);
        String changed = UUID.randomUUID().toString();
        fx.captured(
                changed,
                3_000,
                "EUR",
                charge(changed, 3_000, "pm_card_visa", at(changeDay, "12:00")),
                at(changeDay, "12:00"));

        faults("{\"settlementDrop\":1}");
        run(dropDay, SettlementSource.PSP);
        assertThat(breaks(dropDay)).containsExactly("MISSING_AT_PSP " + dropped);

        faults("{\"settlementDrop\":0,\"settlementAmountMismatch\":1}");
        run(changeDay, SettlementSource.PSP);
        assertThat(breaks(changeDay)).containsExactly("AMOUNT_MISMATCH " + changed);
        List<String> amounts = fx.rows(
                        "SELECT internal_amount, psp_amount FROM recon_breaks WHERE reference = ?", changed)
                .get(0);
        assertThat(amounts.get(0)).isEqualTo("3000");
        assertThat(Long.parseLong(amounts.get(1))).isBetween(3_001L, 4_000L);
    }

    private void faults(String json) {
        given().baseUri(sandbox)
                .contentType(ContentType.JSON)
                .body(json)
                .put("/test/faults")
                .then()
                .statusCode(200);
    }

    private RunResult run(LocalDate date, String source) {
        RunResult result = service.run(date, source, WINDOW);
        assertThat(result.status()).as("%s", result.summary()).isEqualTo(RunResult.SUCCEEDED);
        return result;
    }

    private List<String> breaks(LocalDate d) {
        return fx
                .rows(
                        "SELECT break_type || ' ' || reference FROM recon_breaks WHERE business_date = ?::date",
                        d.toString())
                .stream()
                .map(row -> row.get(0))
                .toList();
    }

    private static List<String> concat(List<String> list, String more) {
        return java.util.stream.Stream.concat(list.stream(), java.util.stream.Stream.of(more))
                .toList();
    }

    private void freezeClock(Instant when) {
        given().baseUri(sandbox)
                .contentType(ContentType.JSON)
                .body("{\"instant\":\"" + when + "\"}")
                .put("/test/clock")
                .then()
                .statusCode(200);
    }

    /** A PaymentIntent through the adapter at {@code when}; returns its id. */
    private String charge(String paymentId, long amount, String source, Instant when) {
        freezeClock(when);
        ChargeResult result = psp.charge(new ChargeRequest(paymentId, amount, "EUR", source))
                .await()
                .atMost(WAIT);
        assertThat(result.status()).as("%s", result).isEqualTo(ChargeResult.Status.CAPTURED);
        return result.pspChargeId();
    }

    private RefundResult refund(String refundId, String paymentId, String intent, long amount, Instant when) {
        freezeClock(when);
        return psp.refund(new RefundRequest(refundId, paymentId, intent, amount, "EUR"))
                .await()
                .atMost(WAIT);
    }

    /**
     * Stripe fails a {@code pm_card_refundFail} refund a moment after accepting it: polls the refund by its id (sent
     * "two days ago", past the key window, so the adapter reads rather than re-sends).
     */
    private void awaitRefundFailed(RefundRequest request, String pspRefundId) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        RefundQuery query = new RefundQuery(request, pspRefundId, Instant.now().minus(Duration.ofDays(2)));
        while (true) {
            RefundResult now = psp.lookUpRefund(query).await().atMost(WAIT);
            if (now.status() == RefundResult.Status.FAILED) {
                return;
            }
            assertThat(System.nanoTime()).as("refund still %s", now).isLessThan(deadline);
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
