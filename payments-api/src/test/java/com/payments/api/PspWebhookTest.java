package com.payments.api;

import static com.payments.api.PspWebhooks.bytes;
import static com.payments.api.PspWebhooks.newEventId;
import static com.payments.api.PspWebhooks.now;
import static com.payments.api.TestSupport.count;
import static com.payments.api.TestSupport.paymentStatus;
import static com.payments.api.TestSupport.rowCounts;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.contracts.events.RefundSucceeded;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandbox;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * PSP webhooks against real PostgreSQL, as the configured PSP shapes and signs them ({@link PspWebhooks}): the
 * sandbox protocol's {@code POST /v1/psp/webhooks} by default, Stripe's {@code POST /v1/psp/stripe/webhooks} when run
 * with {@code PSP_PROVIDER=stripe STRIPE_API_KEY=… STRIPE_WEBHOOK_SECRET=…} (CI runs it both ways). Disputes, which
 * only Stripe sends, and a rolling Stripe secret are in {@link StripeWebhookTest}.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "8s"),
        scope = TestResourceScope.GLOBAL)
class PspWebhookTest {
    final PspWebhooks psp = PspWebhooks.active();

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @Test
    void validChargeSucceededCapturesAnUnknownPaymentOnceAndADuplicateChangesNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1500, "tok_visa");
        String charge = "pi_wh1_" + id.toString().substring(0, 8);
        String event = psp.chargeSucceeded(newEventId(), id, charge, 1500, "EUR");

        Response first = psp.deliver(event);
        first.then().statusCode(200);
        assertThat(first.<Boolean>path("duplicate")).isFalse();
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND psp_reference = $2", id, charge))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND from_status = 'UNKNOWN' AND to_status = 'CAPTURED' AND actor = 'webhook'",
                        id))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'PaymentCaptured'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(eventOutcome(event)).isEqualTo("applied");

        Map<String, Long> before = rowCounts(pool);
        Response again = psp.deliver(event);
        again.then().statusCode(200);
        assertThat(again.<Boolean>path("duplicate")).isTrue();
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void webhookSignedAndDeliveredByTheRealSandboxCapturesThePayment() {
        // a second sandbox process whose webhooks go to this application (the shared one sends none)
        String url = "http://localhost:" + RestAssured.port + psp.path();
        Map<String, String> config = psp.stripe()
                ? Map.of("psp.stripe.webhook-url", url, "psp.stripe.webhook-secrets", psp.secret)
                : Map.of("psp.webhook.url", url, "psp.webhook.secret", psp.secret);
        try (PspSandbox sandbox = PspSandbox.start(config)) {
            UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2100, "tok_visa");
            chargeAtPsp(sandbox.url(), id, 2100, psp.stripe() ? "pm_card_visa" : "tok_visa");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> paymentStatus(pool, id).equals("CAPTURED"));
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM payment_transitions WHERE payment_id = $1 AND actor = 'webhook'",
                            id))
                    .isEqualTo(1);
            assertThat(count(
                            pool,
                            "SELECT count(*) FROM payments WHERE id = $1 AND psp_reference LIKE $2",
                            id,
                            psp.stripe() ? "pi_%" : "ch_%"))
                    .isEqualTo(1);
        }
    }

    @Test
    void chargeFailedMovesAnUnknownPaymentToFailedWithTheDeclineCode() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1600, "tok_chargeDeclined");
        String event = psp.chargeFailed(newEventId(), id, "pi_wh2", 1600, "EUR", "card_declined");
        psp.deliver(event).then().statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("FAILED");
        assertThat(count(pool, "SELECT count(*) FROM payments WHERE id = $1 AND decline_code = 'card_declined'", id))
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
    }

    @Test
    void tamperedOrWronglySignedOrUnsignedEventsAre400AndStoreNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        String event = psp.chargeSucceeded(newEventId(), id, "pi_wh3", 1700, "EUR");
        long t = now();
        String signature = psp.signature(event, t);
        Map<String, Long> before = rowCounts(pool);

        Response tampered = psp.post(event.replace("1700", "17000"), signature);
        tampered.then().statusCode(400).contentType("application/problem+json");
        assertThat(tampered.<String>path("code")).isEqualTo("invalid_webhook_signature");
        for (String wrong : new String[] {
            PspWebhooks.sign("whsec_other", t, bytes(event)),
            null,
            "t=" + t,
            signature.replace("t=" + t, "t=" + (t + 1)),
            PspWebhooks.signWithEmptyKey(t, bytes(event))
        }) {
            Response r = psp.post(event, wrong);
            r.then().statusCode(400).contentType("application/problem+json");
            assertThat(r.<String>path("code")).as(String.valueOf(wrong)).isEqualTo("invalid_webhook_signature");
        }
        psp.post("not json", PspWebhooks.sign(psp.secret, t, bytes("not json")))
                .then()
                .statusCode(400)
                .body("code", org.hamcrest.Matchers.equalTo("invalid_webhook"));

        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void staleOrFutureTimestampIs400AndStoresNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1800, "tok_visa");
        String event = psp.chargeSucceeded(newEventId(), id, "pi_wh4", 1800, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response stale = psp.deliver(event, now() - 600);
        stale.then().statusCode(400).contentType("application/problem+json");
        assertThat(stale.<String>path("code")).isEqualTo("stale_webhook");
        psp.deliver(event, now() + 600).then().statusCode(400);
        // a forged signature is a bad signature, however old
        psp.post(event, PspWebhooks.sign("whsec_other", now() - 600, bytes(event)))
                .then()
                .statusCode(400)
                .body("code", org.hamcrest.Matchers.equalTo("invalid_webhook_signature"));

        assertThat(rowCounts(pool)).isEqualTo(before);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
    }

    @Test
    void theOtherProvidersRouteIs404AndStoresNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1850, "tok_visa");
        String event = psp.chargeSucceeded(newEventId(), id, "pi_wh_other", 1850, "EUR");
        Map<String, Long> before = rowCounts(pool);

        Response r = psp.post(psp.otherPath(), event, psp.signature(event, now()));

        r.then().statusCode(404).contentType("application/problem+json");
        assertThat(r.<String>path("code")).isEqualTo("webhook_provider_not_configured");
        assertThat(rowCounts(pool)).isEqualTo(before);
    }

    @Test
    void webhookThatSettlesAPaymentPastTheResolverDeadlineResolvesItsOperationsItem() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        UUID other = Fixtures.insertPayment(pool, "UNKNOWN", 1700, "tok_visa");
        Fixtures.openDeadlineItem(pool, id);
        Fixtures.openDeadlineItem(pool, other);
        psp.deliver(psp.chargeSucceeded(newEventId(), id, "pi_wh_late", 1700, "EUR"))
                .then()
                .statusCode(200);

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline' AND status = 'RESOLVED' AND resolved_at IS NOT NULL AND details ->> 'resolution' = 'webhook: CAPTURED'",
                        id.toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'resolver_deadline' AND status = 'OPEN'",
                        other.toString()))
                .as("another payment's item stays open")
                .isEqualTo(1);
    }

    @Test
    void failedAfterSucceededNeverMovesBackAndQueuesAnOperationsItem() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 1900, "tok_visa");
        psp.deliver(psp.chargeSucceeded(newEventId(), id, "pi_wh5", 1900, "EUR"))
                .then()
                .statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        Map<String, Long> before = rowCounts(pool);

        String late = psp.chargeFailed(newEventId(), id, "pi_wh5", 1900, "EUR", "card_declined");
        psp.deliver(late).then().statusCode(200);

        assertThat(paymentStatus(pool, id)).isEqualTo("CAPTURED");
        assertThat(eventOutcome(late)).isEqualTo("conflict");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'webhook_failed_after_captured' AND status = 'OPEN'",
                        id.toString()))
                .isEqualTo(1);
        assertOnlyEventAndItemAdded(before);
    }

    @Test
    void chargeEventAboutAnAlreadyCapturedPaymentIsStoredOnceAsNoChangeAndChangesNothingElse() {
        Fixtures.Refunded r = Fixtures.pendingRefund(pool, 5000, 2000);
        Map<String, Long> before = rowCounts(pool);
        String event = psp.chargeSucceeded(newEventId(), r.paymentId(), r.charge(), 5000, "EUR");

        Response first = psp.deliver(event);
        first.then().statusCode(200);
        assertThat(first.<Boolean>path("duplicate")).isFalse();
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM psp_webhook_events WHERE event_id = $1 AND outcome = 'no_change' AND processed_at IS NOT NULL",
                        eventId(event)))
                .as("stored once, processed, for deduplication and the payment's story")
                .isEqualTo(1);
        before.merge("psp_webhook_events", 1L, Long::sum);
        assertThat(rowCounts(pool)).isEqualTo(before);

        Response again = psp.deliver(event);
        again.then().statusCode(200);
        assertThat(again.<Boolean>path("duplicate")).isTrue();
        assertThat(rowCounts(pool)).isEqualTo(before);

        // the same final state with other money is not "no change": an item for a human
        String other = psp.chargeSucceeded(newEventId(), r.paymentId(), r.charge(), 4999, "EUR");
        psp.deliver(other).then().statusCode(200);
        assertThat(eventOutcome(other)).isEqualTo("conflict");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'psp_amount_mismatch'",
                        r.paymentId().toString()))
                .isEqualTo(1);
    }

    @Test
    void eventAboutAPaymentWeDoNotKnowIsStoredAndQueuedForAHuman() {
        UUID stranger = UUID.randomUUID();
        String event = psp.chargeSucceeded(newEventId(), stranger, "pi_wh6", 500, "EUR");
        Map<String, Long> before = rowCounts(pool);

        psp.deliver(event).then().statusCode(200);

        assertThat(eventOutcome(event)).isEqualTo("unknown_payment");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'webhook' AND subject_id = $1 AND reason = 'unknown_payment'",
                        eventId(event)))
                .isEqualTo(1);
        assertOnlyEventAndItemAdded(before);
    }

    @Test
    void amountThatDoesNotMatchIsQueuedAndChangesNothing() {
        UUID id = Fixtures.insertPayment(pool, "UNKNOWN", 2000, "tok_visa");
        String event = psp.chargeSucceeded(newEventId(), id, "pi_wh7", 2001, "EUR");
        psp.deliver(event).then().statusCode(200);
        assertThat(paymentStatus(pool, id)).isEqualTo("UNKNOWN");
        assertThat(eventOutcome(event)).isEqualTo("conflict");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'payment' AND subject_id = $1 AND reason = 'psp_amount_mismatch' AND details ->> 'detectedBy' = 'webhook' AND (details -> 'data' ->> 'amount')::bigint = 2001 AND (details ->> 'paymentAmount')::bigint = 2000",
                        id.toString()))
                .as("the same item as the resolver's lookup opens (ResolverTest)")
                .isEqualTo(1);
        assertThat(count(pool, "SELECT count(*) FROM ledger_transactions WHERE reference = $1", id.toString()))
                .isZero();
        assertThat(count(pool, "SELECT count(*) FROM outbox WHERE key = $1", id.toString()))
                .isZero();
    }

    @Test
    void refundSucceededSettlesAPendingRefundOnceBooksItAndResolvesItsStuckItem() throws Exception {
        Fixtures.Refunded r = Fixtures.pendingRefund(pool, 3000, 1200);
        openStuckItem(r.refundId());
        String event = psp.refund(
                newEventId(), "succeeded", false, r.refundId(), r.paymentId(), "re_ok1", r.charge(), 1200, "EUR");

        psp.deliver(event).then().statusCode(200);

        assertThat(eventOutcome(event)).isEqualTo("applied");
        assertThat(refundStatus(r.refundId())).isEqualTo("SUCCEEDED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM refunds WHERE id = $1 AND psp_reference = 're_ok1' AND completed_at IS NOT NULL",
                        r.refundId()))
                .isEqualTo(1);
        assertThat(refundedAmount(r.paymentId()))
                .as("the reservation stays: the money went back")
                .isEqualTo(1200);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1",
                        r.refundId().toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'RefundSucceeded' AND payload ->> 'refundId' = $2",
                        r.paymentId().toString(),
                        r.refundId().toString()))
                .isEqualTo(1);
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_id = $1 AND reason = 'refund_pending_too_long' AND status = 'RESOLVED' AND details ->> 'resolution' = 'webhook: SUCCEEDED'",
                        r.refundId().toString()))
                .isEqualTo(1);
        // settle_refund (V95) wrote them: the same ledger rows and event as refunds-worker's RefundCommandConsumerTest
        List<String> entries = new ArrayList<>();
        pool.preparedQuery(
                        """
                        SELECT t.description, e.account, e.amount, e.currency FROM ledger_entries e
                          JOIN ledger_transactions t ON t.id = e.transaction_id
                         WHERE t.kind = 'REFUND' AND t.reference = $1 ORDER BY e.account""")
                .execute(Tuple.of(r.refundId().toString()))
                .await()
                .indefinitely()
                .forEach(row -> entries.add(
                        row.getString(0) + ": " + row.getString(1) + " " + row.getLong(2) + " " + row.getString(3)));
        assertThat(entries)
                .containsExactly(
                        "refund of payment " + r.paymentId() + ": merchant_payable 1200 EUR",
                        "refund of payment " + r.paymentId() + ": psp_receivable -1200 EUR");
        Row outbox = pool.preparedQuery(
                        """
                        SELECT o.topic, o.payload::text AS payload, r.merchant_id FROM outbox o
                          JOIN refunds r ON r.id = (o.payload ->> 'refundId')::uuid
                         WHERE o.key = $1 AND o.event_type = 'RefundSucceeded'""")
                .execute(Tuple.of(r.paymentId().toString()))
                .await()
                .indefinitely()
                .iterator()
                .next();
        assertThat(outbox.getString("topic")).isEqualTo("payment-events");
        RefundSucceeded read = mapper.readValue(outbox.getString("payload"), RefundSucceeded.class);
        assertThat(read.eventId()).isNotNull();
        assertThat(read.occurredAt()).isBetween(Instant.now().minusSeconds(60), Instant.now());
        assertThat(read)
                .usingRecursiveComparison()
                .ignoringFields("eventId", "occurredAt")
                .isEqualTo(new RefundSucceeded(
                        null,
                        RefundSucceeded.TYPE,
                        r.refundId(),
                        r.paymentId(),
                        outbox.getUUID("merchant_id"),
                        1200,
                        "EUR",
                        "re_ok1",
                        null,
                        Map.of()));

        // out of order: a pending update that arrives after the outcome changes nothing (Stripe sends one)
        String pending = psp.refund(
                newEventId(), "pending", false, r.refundId(), r.paymentId(), "re_ok1", r.charge(), 1200, "EUR");
        if (pending != null) {
            Map<String, Long> before = rowCounts(pool);
            psp.deliver(pending).then().statusCode(200);
            assertThat(eventOutcome(pending)).isEqualTo("no_change");
            before.merge("psp_webhook_events", 1L, Long::sum);
            assertThat(rowCounts(pool)).isEqualTo(before);
            assertThat(refundStatus(r.refundId())).isEqualTo("SUCCEEDED");
        }
    }

    @Test
    void lateRefundFailureReleasesTheReservationExactlyOnceUnderConcurrentDuplicateDeliveries() throws Exception {
        Fixtures.Refunded r = Fixtures.pendingRefund(pool, 5000, 2000);
        assertThat(refundedAmount(r.paymentId())).isEqualTo(2000);
        // two events about the same failure (Stripe: refund.updated and refund.failed), each delivered four times
        String first = psp.refund(
                newEventId(), "failed", false, r.refundId(), r.paymentId(), "re_fail1", r.charge(), 2000, "EUR");
        String second = psp.refund(
                newEventId(), "failed", true, r.refundId(), r.paymentId(), "re_fail1", r.charge(), 2000, "EUR");
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            requests.add(request(first));
            requests.add(request(second));
        }

        List<HttpResponse<String>> answers = TestSupport.concurrently(requests);

        assertThat(answers)
                .allSatisfy(a -> assertThat(a.statusCode()).as(a.body()).isEqualTo(200));
        assertThat(answers.stream().filter(a -> a.body().contains("\"duplicate\":false")))
                .as("each event stored once")
                .hasSize(2);
        assertThat(refundStatus(r.refundId())).isEqualTo("FAILED");
        assertThat(refundedAmount(r.paymentId())).as("released once, not twice").isZero();
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM outbox WHERE key = $1 AND event_type = 'RefundFailed' AND payload ->> 'refundId' = $2",
                        r.paymentId().toString(),
                        r.refundId().toString()))
                .isEqualTo(1);
        assertThat(List.of(eventOutcome(first), eventOutcome(second)))
                .containsExactlyInAnyOrder("applied", "no_change");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM ledger_transactions WHERE reference = $1",
                        r.refundId().toString()))
                .isZero();

        // a success that arrives after the failure never overwrites it: an item for a human, nothing else
        Map<String, Long> before = rowCounts(pool);
        String late = psp.refund(
                newEventId(), "succeeded", false, r.refundId(), r.paymentId(), "re_fail1", r.charge(), 2000, "EUR");
        psp.deliver(late).then().statusCode(200);
        assertThat(eventOutcome(late)).isEqualTo("conflict");
        assertThat(refundStatus(r.refundId())).isEqualTo("FAILED");
        assertThat(count(
                        pool,
                        "SELECT count(*) FROM operations_queue WHERE subject_type = 'refund' AND subject_id = $1 AND reason = 'webhook_refund_succeeded_after_failed' AND status = 'OPEN'",
                        r.refundId().toString()))
                .isEqualTo(1);
        assertOnlyEventAndItemAdded(before);
    }

    @Test
    void refundEventWhoseAmountDisagreesIsQueuedAndChangesNothing() {
        Fixtures.Refunded r = Fixtures.pendingRefund(pool, 4000, 1000);
        Map<String, Long> before = rowCounts(pool);
        String event =
                psp.refund(newEventId(), "failed", false, r.refundId(), r.paymentId(), "re_mm", r.charge(), 999, "EUR");

        psp.deliver(event).then().statusCode(200);

        assertThat(eventOutcome(event)).isEqualTo("conflict");
        assertThat(refundStatus(r.refundId())).isEqualTo("PENDING");
        assertThat(refundedAmount(r.paymentId())).isEqualTo(1000);
        assertOnlyEventAndItemAdded(before);
    }

    @Test
    void refundEventAboutARefundWeDoNotKnowIsQueued() {
        String event = psp.refund(
                newEventId(),
                "succeeded",
                false,
                UUID.randomUUID(),
                UUID.randomUUID(),
                "re_1",
                "pi_unknown",
                10,
                "EUR");
        psp.deliver(event).then().statusCode(200);
        assertThat(eventOutcome(event)).isEqualTo("unknown_refund");
    }

    @Test
    void bodyOverTheLimitIs400() {
        String big = "{\"id\":\"evt_big\",\"type\":\"x\",\"data\":{\"pad\":\"" + "a".repeat(40_000) + "\"}}";
        Response r = psp.deliver(big);
        r.then().statusCode(400);
        assertThat(r.<String>path("code")).isEqualTo("body_too_large");
        assertThat(count(pool, "SELECT count(*) FROM psp_webhook_events WHERE event_id = 'evt_big'"))
                .isZero();
    }

    /** Charges at that PSP directly under the payment id, as our capture would. */
    private void chargeAtPsp(String pspUrl, UUID id, long amount, String source) {
        if (!psp.stripe()) {
            Fixtures.chargeAtPsp(pspUrl, id, amount, source);
            return;
        }
        TestSupport.psp(pspUrl)
                .header("Authorization", "Bearer sk_test_webhooks")
                .header("Idempotency-Key", id.toString())
                .contentType("application/x-www-form-urlencoded")
                .formParam("amount", amount)
                .formParam("currency", "eur")
                .formParam("confirm", "true")
                .formParam("payment_method", source)
                .formParam("metadata[payment_id]", id.toString())
                .post("/stripe/v1/payment_intents")
                .then()
                .statusCode(200);
    }

    private HttpRequest request(String event) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + RestAssured.port + psp.path()))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header(psp.header(), psp.signature(event, now()))
                .POST(HttpRequest.BodyPublishers.ofString(event))
                .build();
    }

    private void openStuckItem(UUID refundId) {
        pool.preparedQuery(
                        "INSERT INTO operations_queue (subject_type, subject_id, reason) VALUES ('refund', $1, 'refund_pending_too_long')")
                .execute(Tuple.of(refundId.toString()))
                .await()
                .indefinitely();
    }

    private void assertOnlyEventAndItemAdded(Map<String, Long> before) {
        Map<String, Long> after = rowCounts(pool);
        assertThat(after.get("psp_webhook_events")).isEqualTo(before.get("psp_webhook_events") + 1);
        assertThat(after.get("operations_queue")).isEqualTo(before.get("operations_queue") + 1);
        after.remove("psp_webhook_events");
        after.remove("operations_queue");
        Map<String, Long> rest = new java.util.HashMap<>(before);
        rest.remove("psp_webhook_events");
        rest.remove("operations_queue");
        assertThat(after).as("no money, state or event change").isEqualTo(rest);
    }

    private String refundStatus(UUID refundId) {
        return single("SELECT status FROM refunds WHERE id = $1", refundId);
    }

    private long refundedAmount(UUID paymentId) {
        return count(pool, "SELECT refunded_amount FROM payments WHERE id = $1", paymentId);
    }

    private String eventOutcome(String event) {
        return single("SELECT outcome FROM psp_webhook_events WHERE event_id = $1", eventId(event));
    }

    private String single(String sql, Object arg) {
        return pool.preparedQuery(sql)
                .execute(Tuple.of(arg))
                .await()
                .indefinitely()
                .iterator()
                .next()
                .getString(0);
    }

    private static String eventId(String event) {
        return new io.vertx.core.json.JsonObject(event).getString("id");
    }
}
