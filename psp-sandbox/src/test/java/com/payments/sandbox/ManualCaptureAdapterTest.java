package com.payments.sandbox;

import static com.payments.sandbox.Sandbox.counters;
import static com.payments.sandbox.Sandbox.freezeClock;
import static com.payments.sandbox.Sandbox.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.payments.psp.port.CaptureRequest;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.VoidRequest;
import com.payments.psp.sandbox.SandboxPsp;
import com.payments.psp.sandbox.SandboxSettings;
import com.payments.psp.stripe.StripePsp;
import com.payments.psp.stripe.StripeSettings;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import java.net.URI;
import java.net.URL;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Authorize, capture (full or partial), void and expiry through both adapters of psp-common ({@link SandboxPsp} on the
 * sandbox protocol, {@link StripePsp} on the Stripe mode), against the sandbox started by this test on loopback: the
 * port's outcomes, the settlement lines and the sandbox's counters (captured at most once).
 */
@QuarkusTest
class ManualCaptureAdapterTest {

    static final Duration WAIT = Duration.ofSeconds(15);
    static Vertx vertx;

    @TestHTTPResource("/")
    URL base;

    @TestHTTPResource("/stripe")
    URL stripeBase;

    final List<PspPort> opened = new ArrayList<>();

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.closeAndAwait();
    }

    @AfterEach
    void reset() {
        opened.forEach(PspPort::close);
        Sandbox.resetFaultsAndClock();
    }

    /** The adapter of {@code provider}, each HTTP call bounded by {@code callTimeout}. */
    PspPort adapter(String provider, Duration callTimeout) {
        PspPort port =
                switch (provider) {
                    case "sandbox" ->
                        new SandboxPsp(
                                vertx,
                                new SandboxSettings(
                                        URI.create(base.toString()),
                                        Duration.ofSeconds(1),
                                        callTimeout,
                                        16,
                                        List.of("whsec_sandbox_secret"),
                                        Duration.ofMinutes(5)),
                                null,
                                null,
                                Clock.systemUTC());
                    default ->
                        new StripePsp(
                                vertx,
                                new StripeSettings(
                                        URI.create(stripeBase.toString()),
                                        "sk_test_manual",
                                        List.of("whsec_stripe_previous"),
                                        StripeSettings.PINNED_API_VERSION,
                                        callTimeout,
                                        Duration.ofMinutes(5),
                                        2,
                                        Duration.ofMillis(50),
                                        Duration.ofHours(23),
                                        Duration.ofHours(1),
                                        16),
                                null,
                                null,
                                Clock.systemUTC());
                };
        opened.add(port);
        return port;
    }

    PspPort adapter(String provider) {
        return adapter(provider, Duration.ofSeconds(5));
    }

    static <T> T result(Uni<T> uni) {
        return uni.await().atMost(WAIT);
    }

    static ChargeRequest request(String paymentId, long amount, String source) {
        return new ChargeRequest(paymentId, amount, "EUR", source);
    }

    static ChargeQuery lookup(ChargeRequest request, String pspChargeId) {
        return new ChargeQuery(request, pspChargeId, Instant.now(), true);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void partialCaptureTakesOnlyTheCapturedAmountOnceAndSettlesIt(String provider) {
        freezeClock("2033-02-03T10:00:00Z");
        PspPort psp = adapter(provider);
        String pay = unique("pay");
        ChargeRequest authorize = request(pay, 1_000, "tok_visa");
        ChargeResult held = result(psp.authorize(authorize));
        assertEquals(ChargeResult.Status.AUTHORIZED, held.status(), held.toString());
        assertEquals(1_000L, held.amount());
        assertEquals(
                ChargeResult.Status.AUTHORIZED,
                result(psp.lookUpCharge(lookup(authorize, held.pspChargeId()))).status());
        assertEquals(0, counters(pay).chargeMovements(), "an authorization takes no money");

        CaptureRequest capture = new CaptureRequest(pay, held.pspChargeId(), 600, "EUR");
        ChargeResult captured = result(psp.capture(capture));
        assertEquals(ChargeResult.Status.CAPTURED, captured.status(), captured.toString());
        assertEquals(600L, captured.amount(), "the captured amount");
        ChargeResult resent = result(psp.capture(capture));
        assertEquals(ChargeResult.Status.CAPTURED, resent.status(), "the same capture again replays");
        assertEquals(600L, resent.amount());
        ChargeResult now = result(psp.lookUpCharge(lookup(authorize, held.pspChargeId())));
        assertEquals(ChargeResult.Status.CAPTURED, now.status());
        assertEquals(600L, now.amount());

        ChargeResult voidAfter = result(psp.voidAuthorization(new VoidRequest(pay, held.pspChargeId())));
        assertEquals(ChargeResult.Status.DECLINED, voidAfter.status());
        assertEquals(ChargeResult.ALREADY_CAPTURED, voidAfter.declineCode());

        Counters counted = counters(pay);
        assertEquals(1, counted.chargeMovements(), "captured once");
        assertEquals(600, counted.capturedAmount());
        assertEquals(2, counted.captureRequests());
        assertEquals(0, counted.voidMovements());

        String otherPay = unique("pay");
        assertEquals(
                ChargeResult.Status.AUTHORIZED,
                result(psp.authorize(request(otherPay, 700, "tok_visa"))).status());
        List<SettlementLine> lines = psp.settlementLines(LocalDate.parse("2033-02-03"))
                .collect()
                .asList()
                .await()
                .atMost(WAIT);
        List<SettlementLine> ours = lines.stream()
                .filter(l -> pay.equals(l.reference()) || otherPay.equals(l.reference()))
                .toList();
        assertEquals(1, ours.size(), "only the capture is a settlement line: " + ours);
        assertEquals("CHARGE", ours.get(0).type());
        assertEquals(pay, ours.get(0).reference());
        assertEquals(600, ours.get(0).amount());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void refusalsAreStableDeclinesAndAVoidReleasesTheHold(String provider) {
        PspPort psp = adapter(provider);
        String pay = unique("pay");
        ChargeRequest authorize = request(pay, 1_000, "tok_visa");
        String id = result(psp.authorize(authorize)).pspChargeId();

        CaptureRequest tooMuch = new CaptureRequest(pay, id, 1_100, "EUR");
        ChargeResult refused = result(psp.capture(tooMuch));
        assertEquals(ChargeResult.Status.DECLINED, refused.status(), refused.toString());
        assertEquals(ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED, refused.declineCode());
        assertEquals(refused, result(psp.capture(tooMuch)), "the same capture again: the same refusal");
        // the payment's one capture key now holds the refused request: another amount under it proves nothing
        ChargeResult otherAmount = result(psp.capture(new CaptureRequest(pay, id, 1_000, "EUR")));
        assertEquals(ChargeResult.Status.UNKNOWN, otherAmount.status(), otherAmount.toString());
        assertTrue(otherAmount.needsAttention());
        assertEquals(
                ChargeResult.Status.AUTHORIZED,
                result(psp.lookUpCharge(lookup(authorize, id))).status());

        VoidRequest voiding = new VoidRequest(pay, id);
        ChargeResult voided = result(psp.voidAuthorization(voiding));
        assertEquals(ChargeResult.Status.CANCELED, voided.status(), voided.toString());
        assertEquals(ChargeResult.VOIDED, voided.detail());
        assertEquals(
                ChargeResult.Status.CANCELED,
                result(psp.voidAuthorization(voiding)).status(),
                "idempotent");
        ChargeResult looked = result(psp.lookUpCharge(lookup(authorize, id)));
        assertEquals(ChargeResult.Status.CANCELED, looked.status());
        assertEquals(ChargeResult.VOIDED, looked.detail());
        assertEquals(0, counters(pay).capturedAmount());
        assertEquals(1, counters(pay).voidMovements());

        String voidedFirst = unique("pay");
        String voidedId =
                result(psp.authorize(request(voidedFirst, 500, "tok_visa"))).pspChargeId();
        assertEquals(
                ChargeResult.Status.CANCELED,
                result(psp.voidAuthorization(new VoidRequest(voidedFirst, voidedId)))
                        .status());
        ChargeResult late = result(psp.capture(new CaptureRequest(voidedFirst, voidedId, 500, "EUR")));
        assertEquals(ChargeResult.Status.DECLINED, late.status(), late.toString());
        assertEquals(ChargeResult.AUTHORIZATION_CANCELED, late.declineCode());
        assertEquals(0, counters(voidedFirst).capturedAmount());

        ChargeResult declined = result(psp.authorize(request(unique("pay"), 500, "tok_chargeDeclined")));
        assertEquals(ChargeResult.Status.DECLINED, declined.status());
        String notHeld = unique("pay");
        String plainId = result(psp.charge(request(notHeld, 500, "tok_visa"))).pspChargeId();
        ChargeResult notAnAuthorization = result(psp.capture(new CaptureRequest(notHeld, plainId, 500, "EUR")));
        assertEquals(ChargeResult.Status.DECLINED, notAnAuthorization.status(), notAnAuthorization.toString());
        assertEquals(ChargeResult.NOT_AUTHORIZED, notAnAuthorization.declineCode());
        assertEquals(1, counters(notHeld).chargeMovements(), "charged once, nothing more");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void anAuthorizationExpiresAfterSevenDaysOnTheSandboxClock(String provider) {
        freezeClock("2033-03-01T12:00:00Z");
        PspPort psp = adapter(provider);
        String pay = unique("pay");
        ChargeRequest authorize = request(pay, 900, "tok_visa");
        String id = result(psp.authorize(authorize)).pspChargeId();
        freezeClock("2033-03-08T11:59:59Z");
        assertEquals(
                ChargeResult.Status.AUTHORIZED,
                result(psp.lookUpCharge(lookup(authorize, id))).status());
        freezeClock("2033-03-08T12:00:00Z");
        ChargeResult expired = result(psp.lookUpCharge(lookup(authorize, id)));
        assertEquals(ChargeResult.Status.CANCELED, expired.status(), expired.toString());
        assertEquals(ChargeResult.EXPIRED, expired.detail());
        ChargeResult capture = result(psp.capture(new CaptureRequest(pay, id, 900, "EUR")));
        assertEquals(ChargeResult.Status.DECLINED, capture.status());
        assertEquals(ChargeResult.AUTHORIZATION_EXPIRED, capture.declineCode());
        ChargeResult voided = result(psp.voidAuthorization(new VoidRequest(pay, id)));
        assertEquals(ChargeResult.Status.CANCELED, voided.status(), "the hold is gone either way: " + voided);
        assertEquals(ChargeResult.EXPIRED, voided.detail());
        assertEquals(0, counters(pay).capturedAmount());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void aCaptureRacingAVoidEndsWithExactlyOneOfThem(String provider) {
        PspPort psp = adapter(provider);
        for (int round = 0; round < 12; round++) {
            String pay = unique("race");
            String id = result(psp.authorize(request(pay, 2_000, "tok_visa"))).pspChargeId();
            Uni<ChargeResult> capture = psp.capture(new CaptureRequest(pay, id, 1_500, "EUR"));
            Uni<ChargeResult> voiding = psp.voidAuthorization(new VoidRequest(pay, id));
            var both =
                    Uni.combine().all().unis(capture, voiding).asTuple().await().atMost(WAIT);
            ChargeResult captured = both.getItem1();
            ChargeResult voided = both.getItem2();
            Counters counted = counters(pay);
            assertEquals(1, counted.chargeMovements() + counted.voidMovements(), "one winner: " + counted);
            if (captured.status() == ChargeResult.Status.CAPTURED) {
                assertEquals(ChargeResult.Status.DECLINED, voided.status(), voided.toString());
                assertEquals(ChargeResult.ALREADY_CAPTURED, voided.declineCode());
                assertEquals(1_500, counted.capturedAmount());
            } else {
                assertEquals(ChargeResult.Status.DECLINED, captured.status(), captured.toString());
                assertEquals(ChargeResult.AUTHORIZATION_CANCELED, captured.declineCode());
                assertEquals(ChargeResult.Status.CANCELED, voided.status(), voided.toString());
                assertEquals(0, counted.capturedAmount());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void aLostCaptureAnswerIsUnknownAndTheSameCaptureAgainSettlesItWithoutCapturingTwice(String provider) {
        PspPort impatient = adapter(provider, Duration.ofMillis(500));
        PspPort psp = adapter(provider);
        String pay = unique("pay");
        // the sandbox protocol's token, else the Stripe mode's knob: the capture is made, its answer held back 1 s
        String source = provider.equals("sandbox") ? "tok_captureTimeout" : "tok_visa";
        ChargeRequest authorize = request(pay, 800, source);
        String id = result(psp.authorize(authorize)).pspChargeId();
        if (provider.equals("stripe")) {
            Sandbox.faults("{\"timeoutRate\":1.0}");
        }
        CaptureRequest capture = new CaptureRequest(pay, id, 800, "EUR");
        ChargeResult lost = result(impatient.capture(capture));
        assertEquals(ChargeResult.Status.UNKNOWN, lost.status(), "a timeout is never a decline: " + lost);
        assertEquals("timeout", lost.detail());
        Sandbox.faults("{\"timeoutRate\":0.0}");

        ChargeResult looked = result(psp.lookUpCharge(lookup(authorize, id)));
        assertEquals(ChargeResult.Status.CAPTURED, looked.status());
        assertEquals(800L, looked.amount());
        ChargeResult resent = result(psp.capture(capture));
        assertEquals(ChargeResult.Status.CAPTURED, resent.status(), resent.toString());
        Counters counted = counters(pay);
        assertEquals(1, counted.chargeMovements());
        assertEquals(800, counted.capturedAmount(), "captured at most once");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sandbox", "stripe"})
    void anAuthorizationWhoseIdWeNeverLearntIsFoundWithoutANewKey(String provider) {
        PspPort psp = adapter(provider);
        String pay = unique("pay");
        ChargeRequest authorize = request(pay, 300, "tok_visa");
        result(psp.authorize(authorize));
        ChargeResult found = result(psp.lookUpCharge(lookup(authorize, null)));
        assertEquals(ChargeResult.Status.AUTHORIZED, found.status(), found.toString());
        assertEquals(300L, found.amount());
        assertEquals(0, counters(pay).chargeMovements());
        ChargeResult never = result(psp.lookUpCharge(lookup(request(unique("pay"), 300, "tok_visa"), null)));
        // the sandbox looks the reference up; Stripe's window is open, so the same authorization is sent with its key
        assertEquals(
                provider.equals("sandbox") ? ChargeResult.Status.NOT_FOUND : ChargeResult.Status.AUTHORIZED,
                never.status(),
                never.toString());
    }
}
