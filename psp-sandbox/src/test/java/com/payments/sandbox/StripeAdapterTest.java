package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.unique;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspLimitSettings;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspEvent;
import com.payments.psp.port.RefundQuery;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.WebhookRejectedException;
import com.payments.psp.stripe.StripePsp;
import com.payments.psp.stripe.StripeSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Stripe adapter of psp-common against the sandbox's Stripe mode, started by this test on loopback: the outcome
 * table, the resolver's paths, refunds, webhook verification and settlement lines (docs/stripe.md).
 */
@QuarkusTest
@WithTestResource(value = StripeWebhookReceiver.class, scope = TestResourceScope.GLOBAL)
class StripeAdapterTest {

    static final Duration WAIT = Duration.ofSeconds(15);
    static Vertx vertx;

    @TestHTTPResource("/stripe")
    URL stripeBase;

    /** Our clock, moved forward to leave Stripe's idempotency window without waiting a day. */
    static final class ShiftedClock extends Clock {
        volatile Duration shift = Duration.ZERO;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.now().plus(shift);
        }
    }

    final ShiftedClock clock = new ShiftedClock();
    SimpleMeterRegistry registry;
    StripePsp psp;
    final List<StripePsp> opened = new ArrayList<>();

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.closeAndAwait();
    }

    @BeforeEach
    void adapter() {
        registry = new SimpleMeterRegistry();
        psp = adapter(s -> s);
    }

    @AfterEach
    void reset() {
        opened.forEach(StripePsp::close);
        Sandbox.resetFaultsAndClock();
    }

    StripeSettings settings() {
        return new StripeSettings(
                URI.create(stripeBase.toString()),
                "sk_test_adapter",
                List.of("whsec_stripe_previous"),
                StripeSettings.PINNED_API_VERSION,
                Duration.ofSeconds(5),
                Duration.ofMinutes(5),
                2,
                Duration.ofMillis(50),
                Duration.ofHours(23),
                Duration.ofHours(1),
                64);
    }

    StripePsp adapter(UnaryOperator<StripeSettings> tweak) {
        PspConcurrencyLimit limit = new PspConcurrencyLimit(
                new PspLimitSettings(32, 4, 256, 1_000, Duration.ofSeconds(5)), registry, "test.psp");
        StripePsp adapter = new StripePsp(vertx, tweak.apply(settings()), limit, registry, clock);
        opened.add(adapter);
        return adapter;
    }

    static <T> T result(Uni<T> uni) {
        return uni.await().atMost(WAIT);
    }

    static ChargeRequest charge(String paymentId, long amount, String source) {
        return new ChargeRequest(paymentId, amount, "EUR", source);
    }

    double count(String call, String outcome) {
        var timer = registry.find("psp.calls")
                .tags("provider", "stripe", "call", call, "outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    @Test
    void eachStripeAnswerMapsToOurOutcome() {
        String pay = unique("pay");
        ChargeResult captured = result(psp.charge(charge(pay, 2500, "tok_visa")));
        assertEquals(ChargeResult.Status.CAPTURED, captured.status());
        assertTrue(captured.pspChargeId().startsWith("pi_"), captured.toString());
        assertEquals(1, counters(pay).chargeMovements());
        assertEquals(1, count("charge", "captured"));

        ChargeResult declined = result(psp.charge(charge(unique("pay"), 100, "pm_card_chargeDeclined")));
        assertEquals(ChargeResult.Status.DECLINED, declined.status());
        assertEquals("generic_decline", declined.declineCode());
        assertTrue(declined.pspChargeId().startsWith("pi_"));
        assertEquals(
                "insufficient_funds",
                result(psp.charge(charge(unique("pay"), 100, "tok_chargeDeclinedInsufficientFunds")))
                        .declineCode());

        ChargeResult action = result(psp.charge(charge(unique("pay"), 100, "pm_card_authenticationRequired")));
        assertEquals(ChargeResult.Status.UNKNOWN, action.status());
        assertEquals("requires_action", action.detail());

        ChargeResult unknownSource = result(psp.charge(charge(unique("pay"), 100, "tok_nosuchcard")));
        assertEquals(ChargeResult.Status.DECLINED, unknownSource.status());
        assertEquals("resource_missing", unknownSource.declineCode());

        Sandbox.faults("{\"errorRate\":1.0}");
        ChargeResult serverError = result(psp.charge(charge(unique("pay"), 100, "tok_visa")));
        assertEquals(ChargeResult.Status.UNKNOWN, serverError.status());
        assertEquals("http_500", serverError.detail());
    }

    @Test
    void aLostAnswerIsUnknownAndTheResolverResendsTheSameKeyInsideTheWindow() {
        // Shorter than the sandbox's timeout-delay (1 s in tests): the answer is lost on the way back.
        StripePsp impatient = adapter(s -> new StripeSettings(
                s.apiBase(),
                s.apiKey(),
                s.webhookSecrets(),
                s.apiVersion(),
                Duration.ofMillis(700),
                s.webhookTolerance(),
                s.rateLimitRetries(),
                s.rateLimitBackoff(),
                s.idempotencyWindow(),
                s.searchLag(),
                s.maxConnections()));
        Sandbox.faults("{\"timeoutRate\":1.0}");
        String pay = unique("pay");
        ChargeRequest request = charge(pay, 1500, "pm_card_visa");
        Instant sentAt = clock.instant();
        ChargeResult lost = result(impatient.charge(request));
        assertEquals(ChargeResult.Status.UNKNOWN, lost.status(), "a timeout is never FAILED");
        assertEquals("timeout", lost.detail());
        Sandbox.faults("{\"timeoutRate\":0.0}");

        ChargeResult resolved = result(psp.lookUpCharge(new ChargeQuery(request, null, sentAt)));
        assertEquals(ChargeResult.Status.CAPTURED, resolved.status());
        Counters counted = counters(pay);
        assertEquals(2, counted.chargeRequests(), "the same request again");
        assertEquals(1, counted.chargeMovements(), "Stripe replayed it: still one charge");
        assertEquals(1, count("charge_resend", "captured"));
    }

    @Test
    void afterTheWindowTheResolverRetrievesByIdOrSearchesByMetadata() {
        String pay = unique("pay");
        ChargeRequest request = charge(pay, 900, "pm_card_visa");
        Instant sentAt = clock.instant();
        String id = result(psp.charge(request)).pspChargeId();
        String declinedPay = unique("pay");
        ChargeRequest declinedRequest = charge(declinedPay, 900, "pm_card_chargeDeclined");
        String declinedId = result(psp.charge(declinedRequest)).pspChargeId();

        clock.shift = Duration.ofHours(25);
        ChargeResult byId = result(psp.lookUpCharge(new ChargeQuery(request, id, sentAt)));
        assertEquals(ChargeResult.captured(id).withMoney(900L, "EUR"), byId, "with Stripe's amount, for the resolver");
        ChargeResult declinedById = result(psp.lookUpCharge(new ChargeQuery(declinedRequest, declinedId, sentAt)));
        assertEquals(ChargeResult.Status.DECLINED, declinedById.status());
        assertEquals("generic_decline", declinedById.declineCode());
        assertEquals(1, count("charge_retrieve", "captured"));

        await().atMost(WAIT)
                .untilAsserted(() -> assertEquals(
                        ChargeResult.captured(id).withMoney(900L, "EUR"),
                        result(psp.lookUpCharge(new ChargeQuery(request, null, sentAt)))));
        ChargeResult never =
                result(psp.lookUpCharge(new ChargeQuery(charge(unique("pay"), 900, "pm_card_visa"), null, sentAt)));
        assertEquals(ChargeResult.Status.NOT_FOUND, never.status(), "searched after the lag: never received");
        assertEquals(1, counters(pay).chargeRequests(), "no lookup charged again");
    }

    @Test
    void searchLagsSoAnEmptySearchSoonAfterSendingIsUnknown() {
        StripePsp patient = adapter(s -> new StripeSettings(
                s.apiBase(),
                s.apiKey(),
                s.webhookSecrets(),
                s.apiVersion(),
                s.callTimeout(),
                s.webhookTolerance(),
                s.rateLimitRetries(),
                s.rateLimitBackoff(),
                s.idempotencyWindow(),
                Duration.ofHours(30),
                s.maxConnections()));
        Sandbox.freezeClock("2031-07-02T10:00:00Z");
        String pay = unique("pay");
        ChargeRequest request = charge(pay, 400, "pm_card_visa");
        Instant sentAt = clock.instant();
        String id = result(patient.charge(request)).pspChargeId();
        clock.shift = Duration.ofHours(25);
        ChargeResult soon = result(patient.lookUpCharge(new ChargeQuery(request, null, sentAt)));
        assertEquals(ChargeResult.unknown(null, "search_lag"), soon, "not indexed yet: not 'never received'");
        Sandbox.freezeClock("2031-07-02T10:00:02Z");
        assertEquals(
                ChargeResult.captured(id).withMoney(400L, "EUR"),
                result(patient.lookUpCharge(new ChargeQuery(request, null, sentAt))));
    }

    @Test
    void aConcurrentRequestWithTheKeyIsUnknownAndAReusedKeyNeedsAnOperator() {
        Sandbox.faults("{\"latencyFixedMs\":400}");
        String pay = unique("pay");
        ChargeRequest request = charge(pay, 600, "pm_card_visa");
        List<ChargeResult> results = Uni.join()
                .all(psp.charge(request), psp.charge(request))
                .andFailFast()
                .await()
                .atMost(WAIT);
        assertEquals(
                1,
                results.stream()
                        .filter(r -> r.status() == ChargeResult.Status.CAPTURED)
                        .count(),
                results.toString());
        ChargeResult conflict = results.stream()
                .filter(r -> r.status() != ChargeResult.Status.CAPTURED)
                .findFirst()
                .orElseThrow();
        assertEquals(ChargeResult.unknown(null, "idempotency_key_in_use"), conflict);
        assertEquals(1, counters(pay).chargeMovements());
        Sandbox.faults("{\"latencyFixedMs\":0}");

        ChargeResult reused = result(psp.charge(charge(pay, 601, "pm_card_visa")));
        assertEquals(ChargeResult.Status.UNKNOWN, reused.status(), "never FAILED");
        assertTrue(reused.needsAttention());
        assertEquals("idempotency_error", reused.detail());
    }

    @Test
    void rateLimitsAreRetriedThenUnknown() {
        Sandbox.faults("{\"rateLimitRate\":1.0}");
        long start = System.nanoTime();
        ChargeResult limited = result(psp.charge(charge(unique("pay"), 100, "pm_card_visa")));
        assertEquals(ChargeResult.unknown(null, "http_429"), limited);
        assertTrue(System.nanoTime() - start >= Duration.ofMillis(50).toNanos(), "it waited before retrying");
        assertEquals(1, count("charge", "unknown"));
    }

    @Test
    void refundsMapTheirStatusesAndTheLookupFindsThemAfterTheWindow() {
        String pay = unique("pay");
        String intent = result(psp.charge(charge(pay, 1000, "pm_card_visa"))).pspChargeId();
        String ref = unique("ref");
        RefundRequest request = new RefundRequest(ref, pay, intent, 400, "EUR");
        RefundResult refunded = result(psp.refund(request));
        assertEquals(RefundResult.Status.SUCCEEDED, refunded.status());
        assertTrue(refunded.pspRefundId().startsWith("re_"));
        assertEquals(1, counters(ref).refundMovements());

        RefundResult tooMuch = result(psp.refund(new RefundRequest(unique("ref"), pay, intent, 601, "EUR")));
        assertEquals(RefundResult.of(RefundResult.Status.FAILED, null, "amount_too_large"), tooMuch);

        String failingPay = unique("pay");
        String failingIntent = result(psp.charge(charge(failingPay, 700, "pm_card_refundFail")))
                .pspChargeId();
        String failingRef = unique("ref");
        RefundRequest failing = new RefundRequest(failingRef, failingPay, failingIntent, 700, "EUR");
        Instant sentAt = clock.instant();
        RefundResult pending = result(psp.refund(failing));
        assertEquals(RefundResult.Status.PENDING, pending.status());
        assertEquals(pending, result(psp.lookUpRefund(new RefundQuery(failing, null, sentAt))), "resent: replayed");

        clock.shift = Duration.ofHours(25);
        await().atMost(WAIT)
                .untilAsserted(() -> assertEquals(
                        RefundResult.of(RefundResult.Status.FAILED, pending.pspRefundId(), "expired_or_canceled_card"),
                        result(psp.lookUpRefund(new RefundQuery(failing, pending.pspRefundId(), sentAt)))));
        assertEquals(
                RefundResult.Status.FAILED,
                result(psp.lookUpRefund(new RefundQuery(failing, null, sentAt))).status(),
                "found in the PaymentIntent's refund list");
        RefundRequest neverSent = new RefundRequest(unique("ref"), pay, intent, 10, "EUR");
        assertEquals(
                RefundResult.Status.NOT_FOUND,
                result(psp.lookUpRefund(new RefundQuery(neverSent, null, sentAt)))
                        .status());
    }

    @Test
    void webhooksAreVerifiedWithTheRollingSecretAndParsed() {
        String pay = unique("pay");
        String intent =
                result(psp.charge(charge(pay, 1200, "pm_card_createDispute"))).pspChargeId();
        await().atMost(WAIT).until(() -> StripeWebhookReceiver.about(intent).size() >= 2);
        List<PspEvent> events = new ArrayList<>();
        for (StripeWebhookReceiver.Received received : StripeWebhookReceiver.about(intent)) {
            events.add(psp.verifyWebhook(received.body(), header(received.signature())));
        }
        PspEvent succeeded = events.stream()
                .filter(e -> e.type() == PspEvent.Type.CHARGE_SUCCEEDED)
                .findFirst()
                .orElseThrow();
        assertEquals(pay, succeeded.paymentId());
        assertEquals(intent, succeeded.pspChargeId());
        assertEquals(1200, succeeded.amount());
        assertEquals("EUR", succeeded.currency());
        PspEvent dispute = events.stream()
                .filter(e -> e.type() == PspEvent.Type.DISPUTE_CREATED)
                .findFirst()
                .orElseThrow();
        assertEquals(intent, dispute.pspChargeId());
        assertTrue(dispute.pspObjectId().startsWith("dp_"));
        assertNotNull(dispute.eventId());

        StripeWebhookReceiver.Received any = StripeWebhookReceiver.about(intent).get(0);
        byte[] tampered = any.text().replace("1200", "1201").getBytes(StandardCharsets.UTF_8);
        assertThrows(WebhookRejectedException.class, () -> psp.verifyWebhook(tampered, header(any.signature())));
        assertThrows(WebhookRejectedException.class, () -> psp.verifyWebhook(any.body(), name -> null));
        StripePsp otherSecret = adapter(s -> StripeSettings.defaults(s.apiBase(), s.apiKey(), List.of("whsec_other")));
        assertThrows(
                WebhookRejectedException.class, () -> otherSecret.verifyWebhook(any.body(), header(any.signature())));
        clock.shift = Duration.ofMinutes(6);
        assertThrows(
                WebhookRejectedException.class,
                () -> psp.verifyWebhook(any.body(), header(any.signature())),
                "older than the tolerance");
    }

    @Test
    void aRefundFailureEventNamesOurRefund() {
        String pay = unique("pay");
        String intent =
                result(psp.charge(charge(pay, 300, "pm_card_refundFail"))).pspChargeId();
        String ref = unique("ref");
        result(psp.refund(new RefundRequest(ref, pay, intent, 300, "EUR")));
        await().atMost(WAIT).until(() -> StripeWebhookReceiver.about(ref).stream()
                .anyMatch(r -> r.text().contains("\"type\":\"refund.failed\"")));
        PspEvent failed = StripeWebhookReceiver.about(ref).stream()
                .map(r -> psp.verifyWebhook(r.body(), header(r.signature())))
                .filter(e -> e.providerType().equals("refund.failed"))
                .findFirst()
                .orElseThrow();
        assertEquals(PspEvent.Type.REFUND_FAILED, failed.type());
        assertEquals(ref, failed.refundId());
        assertEquals(pay, failed.paymentId());
        assertEquals("expired_or_canceled_card", failed.code());
    }

    @Test
    void settlementLinesComeFromTheBalanceTransactionsOfTheDay() {
        Sandbox.freezeClock("2031-04-02T12:00:00Z");
        String a = unique("pay");
        String b = unique("pay");
        String d = unique("pay");
        String intentA = result(psp.charge(charge(a, 10000, "pm_card_visa"))).pspChargeId();
        result(psp.charge(charge(b, 2000, "tok_visa")));
        result(psp.charge(charge(d, 500, "pm_card_createDispute")));
        String ref = unique("ref");
        result(psp.refund(new RefundRequest(ref, a, intentA, 2500, "EUR")));

        List<SettlementLine> lines = psp.settlementLines(LocalDate.parse("2031-04-02"))
                .collect()
                .asList()
                .await()
                .atMost(WAIT);
        assertEquals(5, lines.size(), lines.toString());
        assertTrue(lines.contains(new SettlementLine(
                lines.stream()
                        .filter(l -> a.equals(l.reference()))
                        .findFirst()
                        .orElseThrow()
                        .pspReference(),
                "CHARGE",
                a,
                10000,
                320,
                "EUR",
                Instant.parse("2031-04-02T12:00:00Z"))));
        SettlementLine refund = lines.stream()
                .filter(l -> l.type().equals("REFUND"))
                .findFirst()
                .orElseThrow();
        assertEquals(ref, refund.reference());
        assertEquals(2500, refund.amount());
        SettlementLine chargeback = lines.stream()
                .filter(l -> l.type().equals("CHARGEBACK"))
                .findFirst()
                .orElseThrow();
        assertEquals(d, chargeback.reference());
        assertEquals(500, chargeback.amount());
        assertEquals(1500, chargeback.fee());
        assertTrue(chargeback.pspReference().startsWith("dp_"));

        assertEquals(
                5,
                psp.payoutLines("po_sbx_20310402")
                        .collect()
                        .asList()
                        .await()
                        .atMost(WAIT)
                        .size());
        assertFalse(psp.settlementLines(LocalDate.parse("2031-04-03")).collect().asList().await().atMost(WAIT).stream()
                .anyMatch(l -> a.equals(l.reference())));
    }

    private static java.util.function.Function<String, String> header(String signature) {
        return name -> "stripe-signature".equalsIgnoreCase(name) ? signature : null;
    }

    @Test
    void aRefundOlderThanTheNewestHundredOfItsPaymentIntentIsFoundAfterTheWindow() {
        String pay = unique("pay");
        String intent = result(psp.charge(charge(pay, 1000, "pm_card_visa"))).pspChargeId();
        Sandbox.freezeClock("2031-05-01T10:00:00Z");
        RefundRequest oldest = new RefundRequest(unique("ref"), pay, intent, 1, "EUR");
        Instant sentAt = clock.instant();
        RefundResult first = result(psp.refund(oldest));
        assertEquals(RefundResult.Status.SUCCEEDED, first.status());
        Sandbox.freezeClock("2031-05-01T10:01:00Z");
        for (int i = 0; i < 120; i++) {
            RefundRequest newer = new RefundRequest(unique("ref"), pay, intent, 1, "EUR");
            assertEquals(
                    RefundResult.Status.SUCCEEDED, result(psp.refund(newer)).status());
        }

        clock.shift = Duration.ofHours(25);
        assertEquals(
                RefundResult.of(RefundResult.Status.SUCCEEDED, first.pspRefundId(), null),
                result(psp.lookUpRefund(new RefundQuery(oldest, null, sentAt))),
                "found on the second page of the PaymentIntent's refunds, not sent again");
        assertEquals(1, counters(oldest.refundId()).refundMovements());
        RefundRequest never = new RefundRequest(unique("ref"), pay, intent, 1, "EUR");
        assertEquals(
                RefundResult.Status.NOT_FOUND,
                result(psp.lookUpRefund(new RefundQuery(never, null, sentAt))).status(),
                "every page read: never made");
    }
}
