package com.payments.psp.stripe;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static com.github.tomakehurst.wiremock.stubbing.Scenario.STARTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspLimitSettings;
import com.payments.psp.PspSaturatedException;
import com.payments.psp.port.CaptureRequest;
import com.payments.psp.port.ChargeQuery;
import com.payments.psp.port.ChargeRequest;
import com.payments.psp.port.ChargeResult;
import com.payments.psp.port.RefundQuery;
import com.payments.psp.port.RefundRequest;
import com.payments.psp.port.RefundResult;
import com.payments.psp.port.SettlementLine;
import com.payments.psp.port.VoidRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The corner cases the sandbox's Stripe mode does not reach, stubbed with WireMock on loopback. */
class StripePspWireMockTest {

    static final Duration WAIT = Duration.ofSeconds(15);
    static Vertx vertx;
    WireMockServer stripe;
    SimpleMeterRegistry registry;
    StripePsp psp;

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.closeAndAwait();
    }

    @BeforeEach
    void start() {
        stripe = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        stripe.start();
        registry = new SimpleMeterRegistry();
        psp = adapter(URI.create("http://127.0.0.1:" + stripe.port()), null);
    }

    @AfterEach
    void stop() {
        psp.close();
        stripe.stop();
    }

    StripePsp adapter(URI base, PspConcurrencyLimit limit) {
        return adapter(base, limit, Duration.ofSeconds(10));
    }

    /** A generous call timeout by default: the first answers of a fresh WireMock are slow on a loaded machine. */
    StripePsp adapter(URI base, PspConcurrencyLimit limit, Duration callTimeout) {
        StripeSettings settings = new StripeSettings(
                base,
                "sk_test_wiremock",
                List.of("whsec_wm"),
                StripeSettings.PINNED_API_VERSION,
                callTimeout,
                Duration.ofMinutes(5),
                2,
                Duration.ofMillis(20),
                Duration.ofHours(23),
                Duration.ofHours(1),
                16);
        return new StripePsp(vertx, settings, limit, registry, Clock.systemUTC());
    }

    static String intent(String status) {
        return "{\"id\":\"pi_wm\",\"object\":\"payment_intent\",\"status\":\"" + status
                + "\",\"amount\":100,\"currency\":\"eur\"}";
    }

    static ChargeResult await(Uni<ChargeResult> uni) {
        return uni.await().atMost(WAIT);
    }

    static ChargeRequest charge(String paymentId) {
        return new ChargeRequest(paymentId, 2500, "EUR", "tok_visa");
    }

    @Test
    void a429IsRetriedWithBackoffAndTheSameKeyAndRequest() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .inScenario("rate limit")
                .whenScenarioStateIs(STARTED)
                .willReturn(aResponse().withStatus(429).withBody("{\"error\":{\"code\":\"rate_limit\"}}"))
                .willSetStateTo("limited once"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .inScenario("rate limit")
                .whenScenarioStateIs("limited once")
                .willReturn(aResponse().withStatus(429))
                .willSetStateTo("limited twice"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .inScenario("rate limit")
                .whenScenarioStateIs("limited twice")
                .willReturn(aResponse().withStatus(200).withBody(intent("succeeded"))));

        assertThat(await(psp.charge(charge("pay-1"))))
                .isEqualTo(ChargeResult.captured("pi_wm").withMoney(100L, "EUR"));
        stripe.verify(
                3,
                postRequestedFor(urlEqualTo("/v1/payment_intents"))
                        .withHeader("Idempotency-Key", equalTo("pay-1"))
                        .withHeader("Authorization", equalTo("Bearer sk_test_wiremock"))
                        .withHeader("Stripe-Version", equalTo(StripeSettings.PINNED_API_VERSION))
                        .withHeader("Content-Type", containing("application/x-www-form-urlencoded"))
                        .withRequestBody(containing("metadata%5Bpayment_id%5D=pay-1"))
                        .withRequestBody(containing("confirm=true"))
                        .withRequestBody(containing("payment_method_data%5Bcard%5D%5Btoken%5D=tok_visa")));
        assertThat(registry.find("psp.calls")
                        .tags("provider", "stripe", "call", "charge", "outcome", "captured")
                        .timer()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void processingAServerErrorAndASlowAnswerAreUnknown() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("processing"))
                .willReturn(aResponse().withStatus(200).withBody(intent("processing"))));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("down"))
                .willReturn(aResponse().withStatus(503).withBody("upstream gone")));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("slow"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody(intent("succeeded"))
                        .withFixedDelay(5_000)));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("badkey"))
                .willReturn(aResponse()
                        .withStatus(401)
                        .withBody("{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Invalid API Key\"}}")));

        assertThat(await(psp.charge(charge("processing"))))
                .isEqualTo(ChargeResult.unknown("pi_wm", "processing").withMoney(100L, "EUR"));
        assertThat(await(psp.charge(charge("down")))).isEqualTo(ChargeResult.unknown(null, "http_503"));
        StripePsp impatient = adapter(URI.create("http://127.0.0.1:" + stripe.port()), null, Duration.ofMillis(1500));
        try {
            assertThat(await(impatient.charge(charge("slow")))).isEqualTo(ChargeResult.unknown(null, "timeout"));
        } finally {
            impatient.close();
        }
        assertThat(await(psp.charge(charge("badkey")))).isEqualTo(ChargeResult.attention(null, "http_401"));
    }

    @Test
    void aServerErrorReplayedInTheLookUpIsReadByIdWhileAFreshOneIsNot() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("pay_replayed"))
                .willReturn(aResponse()
                        .withStatus(500)
                        .withHeader("Idempotent-Replayed", "true")
                        .withBody("{\"error\":{\"type\":\"api_error\"}}")));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("pay_fresh"))
                .willReturn(aResponse().withStatus(500).withBody("{\"error\":{\"type\":\"api_error\"}}")));
        stripe.stubFor(get(urlEqualTo("/v1/payment_intents/pi_wm"))
                .inScenario("intent")
                .whenScenarioStateIs(STARTED)
                .willReturn(aResponse().withStatus(200).withBody(intent("requires_action")))
                .willSetStateTo("paid"));
        stripe.stubFor(get(urlEqualTo("/v1/payment_intents/pi_wm"))
                .inScenario("intent")
                .whenScenarioStateIs("paid")
                .willReturn(aResponse().withStatus(200).withBody(intent("succeeded"))));
        java.time.Instant first = java.time.Instant.now().minusSeconds(60);
        ChargeQuery replayed = new ChargeQuery(charge("pay_replayed"), "pi_wm", first);

        // not settled at Stripe: UNKNOWN for an operator, until Stripe forgets the key; nothing sent anew
        assertThat(await(psp.lookUpCharge(replayed)))
                .isEqualTo(ChargeResult.attention(
                        "pi_wm", "the PSP replays a 500 under the key until " + first.plus(Duration.ofHours(24))));
        ChargeResult captured = await(psp.lookUpCharge(replayed));
        assertThat(captured.status()).isEqualTo(ChargeResult.Status.CAPTURED);
        assertThat(captured.pspChargeId()).isEqualTo("pi_wm");
        // a 500 that is not a replay (the request ran now) is plain UNKNOWN: the next re-send may still run it
        assertThat(await(psp.lookUpCharge(new ChargeQuery(charge("pay_fresh"), null, first))))
                .isEqualTo(ChargeResult.unknown(null, "http_500"));
        stripe.verify(3, postRequestedFor(urlEqualTo("/v1/payment_intents")));
        stripe.verify(
                0,
                com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor(
                        urlPathEqualTo("/v1/payment_intents/search")));
    }

    @Test
    void aReusedKeyInTheLookUpIsSearchedSoThatTheResolverSeesWhatStripeHolds() {
        stripe.stubFor(
                post(urlEqualTo("/v1/payment_intents"))
                        .willReturn(
                                aResponse()
                                        .withStatus(400)
                                        .withBody(
                                                "{\"error\":{\"type\":\"idempotency_error\",\"message\":\"Keys for idempotent"
                                                        + " requests can only be used with the same parameters they were first used with.\"}}")));
        stripe.stubFor(get(urlPathEqualTo("/v1/payment_intents/search"))
                .inScenario("index")
                .whenScenarioStateIs(STARTED)
                .willReturn(aResponse().withStatus(200).withBody("{\"object\":\"search_result\",\"data\":[]}"))
                .willSetStateTo("indexed"));
        stripe.stubFor(get(urlPathEqualTo("/v1/payment_intents/search"))
                .inScenario("index")
                .whenScenarioStateIs("indexed")
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody("{\"object\":\"search_result\",\"data\":[{\"id\":\"pi_held\","
                                + "\"object\":\"payment_intent\",\"status\":\"succeeded\",\"amount\":3100,"
                                + "\"currency\":\"eur\"}]}")));
        ChargeQuery query = new ChargeQuery(
                charge("pay_reused"), null, java.time.Instant.now().minusSeconds(60));

        // not in the search index yet: still unknown, for an operator, never a decline
        ChargeResult first = await(psp.lookUpCharge(query));
        assertThat(first.status()).isEqualTo(ChargeResult.Status.UNKNOWN);
        assertThat(first.needsAttention()).isTrue();
        assertThat(first.detail()).isEqualTo(StripePsp.IDEMPOTENCY_ERROR);

        // indexed: what Stripe holds under our payment id, with its amount for the resolver's comparison
        ChargeResult held = await(psp.lookUpCharge(query));
        assertThat(held.status()).isEqualTo(ChargeResult.Status.CAPTURED);
        assertThat(held.pspChargeId()).isEqualTo("pi_held");
        assertThat(held.amount()).isEqualTo(3100L);
        assertThat(held.currency()).isEqualTo("EUR");
        stripe.verify(2, postRequestedFor(urlEqualTo("/v1/payment_intents")));
        stripe.verify(
                2,
                com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor(
                                urlPathEqualTo("/v1/payment_intents/search"))
                        .withQueryParam("query", equalTo("metadata['payment_id']:'pay_reused'")));
        assertThat(registry.get("psp.calls").tag("provider", "stripe").tag("call", "charge_search").timers().stream()
                        .mapToLong(io.micrometer.core.instrument.Timer::count)
                        .sum())
                .isEqualTo(2);
    }

    static String manual(String status, long amount, long received, String reason) {
        return manual(status, amount, received, reason, "eur");
    }

    static String manual(String status, long amount, long received, String reason, String currency) {
        return "{\"id\":\"pi_wm\",\"object\":\"payment_intent\",\"status\":\"" + status + "\",\"amount\":" + amount
                + ",\"amount_received\":" + received + ",\"currency\":\"" + currency
                + "\",\"capture_method\":\"manual\","
                + "\"cancellation_reason\":" + (reason == null ? "null" : "\"" + reason + "\"") + "}";
    }

    static String unexpectedState(String intent) {
        return "{\"error\":{\"type\":\"invalid_request_error\",\"code\":\"payment_intent_unexpected_state\","
                + "\"payment_intent\":" + intent + "}}";
    }

    @Test
    void anAuthorizationIsAManualPaymentIntentAndItsCaptureSendsAmountToCaptureInStripesUnits() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .willReturn(aResponse().withStatus(200).withBody(manual("requires_capture", 500_000, 0, null, "isk"))));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .willReturn(aResponse().withStatus(200).withBody(manual("succeeded", 500_000, 300_000, null, "isk"))));
        ChargeRequest isk = new ChargeRequest("pay-isk", 5_000, "ISK", "tok_visa");
        assertThat(await(psp.authorize(isk)))
                .isEqualTo(ChargeResult.authorized("pi_wm").withMoney(5_000L, "ISK"));
        stripe.verify(postRequestedFor(urlEqualTo("/v1/payment_intents"))
                .withHeader("Idempotency-Key", equalTo("pay-isk"))
                .withRequestBody(containing("capture_method=manual")));

        assertThat(await(psp.capture(new CaptureRequest("pay-isk", "pi_wm", 3_000, "ISK"))))
                .as("the captured amount, back in ISO units")
                .isEqualTo(ChargeResult.captured("pi_wm").withMoney(3_000L, "ISK"));
        stripe.verify(postRequestedFor(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .withHeader("Idempotency-Key", equalTo("capture-pay-isk"))
                .withRequestBody(equalTo("amount_to_capture=300000")));
    }

    @Test
    void refusedCapturesAndCancelsAreReadFromThePaymentIntentInStripesError() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .inScenario("capture")
                .whenScenarioStateIs(STARTED)
                .willReturn(
                        aResponse().withStatus(400).withBody(unexpectedState(manual("canceled", 1000, 0, "automatic"))))
                .willSetStateTo("voided"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .inScenario("capture")
                .whenScenarioStateIs("voided")
                .willReturn(aResponse()
                        .withStatus(400)
                        .withBody(unexpectedState(manual("canceled", 1000, 0, "requested_by_customer"))))
                .willSetStateTo("captured"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .inScenario("capture")
                .whenScenarioStateIs("captured")
                .willReturn(aResponse().withStatus(400).withBody(unexpectedState(manual("succeeded", 1000, 700, null))))
                .willSetStateTo("too much"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .inScenario("capture")
                .whenScenarioStateIs("too much")
                .willReturn(aResponse()
                        .withStatus(400)
                        .withBody("{\"error\":{\"type\":\"invalid_request_error\",\"code\":\"amount_too_large\"}}"))
                .willSetStateTo("down"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/capture"))
                .inScenario("capture")
                .whenScenarioStateIs("down")
                .willReturn(aResponse().withStatus(500)));
        CaptureRequest capture = new CaptureRequest("pay-3", "pi_wm", 1000, "EUR");
        assertThat(await(psp.capture(capture)).declineCode()).isEqualTo(ChargeResult.AUTHORIZATION_EXPIRED);
        assertThat(await(psp.capture(capture)).declineCode()).isEqualTo(ChargeResult.AUTHORIZATION_CANCELED);
        ChargeResult already = await(psp.capture(capture));
        assertThat(already.status()).isEqualTo(ChargeResult.Status.DECLINED);
        assertThat(already.declineCode()).isEqualTo(ChargeResult.ALREADY_CAPTURED);
        assertThat(already.amount()).as("what Stripe holds as captured").isEqualTo(700L);
        assertThat(await(psp.capture(capture)).declineCode()).isEqualTo(ChargeResult.AMOUNT_EXCEEDS_AUTHORIZED);
        assertThat(await(psp.capture(capture)))
                .as("a 500 proves nothing")
                .isEqualTo(ChargeResult.unknown(null, "http_500"));

        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/cancel"))
                .inScenario("cancel")
                .whenScenarioStateIs(STARTED)
                .willReturn(aResponse().withStatus(200).withBody(manual("canceled", 1000, 0, null)))
                .willSetStateTo("again"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/cancel"))
                .inScenario("cancel")
                .whenScenarioStateIs("again")
                .willReturn(aResponse().withStatus(400).withBody(unexpectedState(manual("canceled", 1000, 0, null))))
                .willSetStateTo("captured"));
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents/pi_wm/cancel"))
                .inScenario("cancel")
                .whenScenarioStateIs("captured")
                .willReturn(
                        aResponse().withStatus(400).withBody(unexpectedState(manual("succeeded", 1000, 1000, null)))));
        VoidRequest voiding = new VoidRequest("pay-3", "pi_wm");
        assertThat(await(psp.voidAuthorization(voiding)).status()).isEqualTo(ChargeResult.Status.CANCELED);
        ChargeResult again = await(psp.voidAuthorization(voiding));
        assertThat(again.status()).as("already canceled: the hold is gone").isEqualTo(ChargeResult.Status.CANCELED);
        assertThat(again.detail()).isEqualTo(ChargeResult.VOIDED);
        assertThat(await(psp.voidAuthorization(voiding)).declineCode()).isEqualTo(ChargeResult.ALREADY_CAPTURED);
        stripe.verify(
                3,
                postRequestedFor(urlEqualTo("/v1/payment_intents/pi_wm/cancel"))
                        .withHeader("Idempotency-Key", equalTo("void-pay-3")));
    }

    @Test
    void aRefusedFirstConnectionOfACaptureIsNotSent() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        StripePsp nowhere = adapter(URI.create("http://127.0.0.1:" + closedPort), null);
        try {
            assertThat(await(nowhere.capture(new CaptureRequest("pay-4", "pi_wm", 100, "EUR"))))
                    .isEqualTo(ChargeResult.notSent());
            assertThat(await(nowhere.voidAuthorization(new VoidRequest("pay-4", "pi_wm"))))
                    .isEqualTo(ChargeResult.notSent());
        } finally {
            nowhere.close();
        }
    }

    @Test
    void aRefusedFirstConnectionIsNotSentNeverDeclined() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        StripePsp nowhere = adapter(URI.create("http://127.0.0.1:" + closedPort), null);
        try {
            assertThat(await(nowhere.charge(charge("pay-2")))).isEqualTo(ChargeResult.notSent());
        } finally {
            nowhere.close();
        }
    }

    @Test
    void aSaturatedLimitFailsWithoutSending() {
        stripe.stubFor(post(urlEqualTo("/v1/payment_intents"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody(intent("succeeded"))
                        .withFixedDelay(300)));
        PspConcurrencyLimit one =
                new PspConcurrencyLimit(new PspLimitSettings(1, 1, 1, 0, Duration.ZERO), registry, "wm.psp");
        StripePsp limited = adapter(URI.create("http://127.0.0.1:" + stripe.port()), one);
        try {
            Uni<ChargeResult> first = limited.charge(charge("first")).memoize().indefinitely();
            first.subscribe().with(r -> {});
            assertThatThrownBy(() -> await(limited.charge(charge("second")))).isInstanceOf(PspSaturatedException.class);
            assertThat(await(first).status()).isEqualTo(ChargeResult.Status.CAPTURED);
            stripe.verify(
                    0,
                    postRequestedFor(urlEqualTo("/v1/payment_intents"))
                            .withHeader("Idempotency-Key", equalTo("second")));
        } finally {
            limited.close();
        }
    }

    @Test
    void refundStatusesAndAReusedKey() {
        stripe.stubFor(post(urlEqualTo("/v1/refunds"))
                .withHeader("Idempotency-Key", equalTo("ref-canceled"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody("{\"id\":\"re_1\",\"object\":\"refund\",\"status\":\"canceled\"}")));
        stripe.stubFor(post(urlEqualTo("/v1/refunds"))
                .withHeader("Idempotency-Key", equalTo("ref-action"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody("{\"id\":\"re_2\",\"object\":\"refund\",\"status\":\"requires_action\"}")));
        stripe.stubFor(post(urlEqualTo("/v1/refunds"))
                .withHeader("Idempotency-Key", equalTo("ref-reused"))
                .willReturn(aResponse()
                        .withStatus(400)
                        .withBody("{\"error\":{\"type\":\"idempotency_error\",\"message\":\"Keys for idempotent"
                                + " requests can only be used with the same parameters\"}}")));

        assertThat(refund("ref-canceled")).isEqualTo(RefundResult.of(RefundResult.Status.FAILED, "re_1", "canceled"));
        assertThat(refund("ref-action")).isEqualTo(RefundResult.of(RefundResult.Status.PENDING, "re_2", null));
        assertThat(refund("ref-reused")).isEqualTo(RefundResult.attention(null, "idempotency_error"));
        stripe.verify(postRequestedFor(urlEqualTo("/v1/refunds"))
                .withRequestBody(containing("payment_intent=pi_wm"))
                .withRequestBody(containing("metadata%5Brefund_id%5D=ref-canceled")));
    }

    private RefundResult refund(String refundId) {
        return psp.refund(new RefundRequest(refundId, "pay-1", "pi_wm", 500, "EUR"))
                .await()
                .atMost(WAIT);
    }

    @Test
    void balanceTransactionsArePagedWithStartingAfterUntilHasMoreIsFalse() {
        String charge = "{\"id\":\"txn_1\",\"object\":\"balance_transaction\",\"amount\":2500,\"fee\":103,"
                + "\"currency\":\"eur\",\"created\":1930003300,\"reporting_category\":\"charge\",\"source\":{\"id\":"
                + "\"ch_1\",\"object\":\"charge\",\"payment_intent\":{\"id\":\"pi_1\",\"metadata\":{\"payment_id\":"
                + "\"pay-1\"}}}}";
        String payout = "{\"id\":\"txn_2\",\"object\":\"balance_transaction\",\"amount\":-2397,\"fee\":0,"
                + "\"currency\":\"eur\",\"created\":1930003301,\"reporting_category\":\"payout\",\"source\":\"po_1\"}";
        String fee = "{\"id\":\"txn_3\",\"object\":\"balance_transaction\",\"amount\":-500,\"fee\":0,"
                + "\"currency\":\"eur\",\"created\":1930003302,\"reporting_category\":\"fee\",\"source\":null}";
        stripe.stubFor(get(urlPathEqualTo("/v1/balance_transactions"))
                .withQueryParam("starting_after", absent())
                .withQueryParam("created[gte]", equalTo("1930003200"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody("{\"object\":\"list\",\"has_more\":true,\"data\":[" + charge + "," + payout + "]}")));
        stripe.stubFor(get(urlPathEqualTo("/v1/balance_transactions"))
                .withQueryParam("starting_after", equalTo("txn_2"))
                .willReturn(aResponse()
                        .withStatus(200)
                        .withBody("{\"object\":\"list\",\"has_more\":false,\"data\":[" + fee + "]}")));

        List<SettlementLine> lines = psp.settlementLines(LocalDate.parse("2031-02-28"))
                .collect()
                .asList()
                .await()
                .atMost(WAIT);
        assertThat(lines)
                .containsExactly(
                        new SettlementLine(
                                "pi_1",
                                "CHARGE",
                                "pay-1",
                                2500,
                                103,
                                "EUR",
                                java.time.Instant.ofEpochSecond(1930003300)),
                        new SettlementLine(
                                "txn_3", "FEE", null, 500, 0, "EUR", java.time.Instant.ofEpochSecond(1930003302)));
    }

    @Test
    void aRefundListThatAnnouncesMoreWithoutMovingOnIsUnknownNeverNotFound() {
        String page = "{\"object\":\"list\",\"has_more\":true,\"data\":[{\"id\":\"re_other\",\"object\":\"refund\","
                + "\"status\":\"succeeded\",\"metadata\":{\"refund_id\":\"ref-other\"}}]}";
        stripe.stubFor(get(urlPathEqualTo("/v1/refunds"))
                .willReturn(aResponse().withStatus(200).withBody(page)));
        RefundRequest refund = new RefundRequest("ref-1", "pay-1", "pi_1", 100, "EUR");
        // first sent long ago: after Stripe's key window the look-up reads the PaymentIntent's refund list
        RefundResult result = psp.lookUpRefund(new RefundQuery(refund, null, java.time.Instant.EPOCH))
                .await()
                .atMost(WAIT);

        assertThat(result).isEqualTo(RefundResult.unknown(null, "refund_list_incomplete"));
        stripe.verify(com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor(urlPathEqualTo("/v1/refunds"))
                .withQueryParam("starting_after", equalTo("re_other")));
    }
}
