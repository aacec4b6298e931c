package com.payments.refunds;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.payments.infra.KafkaTestResource;
import com.payments.infra.PostgresTestResource;
import com.payments.infra.PspSandboxTestResource;
import io.quarkus.test.common.ResourceArg;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Refunds of different payments run at the same time; refunds of one payment still one after the other. Should the
 * first refund's call time out (the test profile's PSP timeout, on a loaded machine), the refund is left to the sync
 * and its payment's next refund may start while that call is still at the PSP: the test checks it did not happen.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class RefundConcurrencyTest {
    private static final int OTHER_PAYMENTS = 8;

    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    Fixtures fx;

    /** One {@code POST /v1/refunds} as the sandbox logged it. */
    record PspRequest(Instant received, Instant answered) {
        boolean overlaps(PspRequest other) {
            return received.isBefore(other.answered) && other.received.isBefore(answered);
        }
    }

    @BeforeEach
    void setUp() {
        fx = new Fixtures(pool, mapper, pspUrl);
        fx.pspFaults("{\"latencyFixedMs\":300}");
    }

    @AfterEach
    void resetPsp() {
        fx.resetPspFaults();
    }

    @Test
    void refundsOfOnePaymentRunInReservationOrderWhileOtherPaymentsOverlapThem() {
        Fixtures.Captured payment = fx.capture("tok_visa", 10_000);
        UUID first = fx.reserve(payment, 1_000);
        UUID second = fx.reserve(payment, 2_000);
        List<UUID> others = new ArrayList<>();
        List<Fixtures.Captured> otherPayments = new ArrayList<>();
        for (int i = 0; i < OTHER_PAYMENTS; i++) {
            Fixtures.Captured other = fx.capture("tok_visa", 5_000);
            otherPayments.add(other);
            others.add(fx.reserve(other, 500));
        }

        fx.publish(fx.command(payment, first, 1_000), fx.command(payment, second, 2_000));
        for (int i = 0; i < OTHER_PAYMENTS; i++) {
            fx.publish(fx.command(otherPayments.get(i), others.get(i), 500));
        }

        List<UUID> all = new ArrayList<>(others);
        all.add(first);
        all.add(second);
        await().atMost(Fixtures.WAIT)
                .until(() -> all.stream().allMatch(id -> fx.status(id).equals("SUCCEEDED")));

        PspRequest firstCall = onlyRequest(first);
        PspRequest secondCall = onlyRequest(second);
        long overlapping = others.stream()
                .map(this::onlyRequest)
                .filter(call -> call.overlaps(firstCall) || call.overlaps(secondCall))
                .count();
        // One at a time (the old consumer) would overlap none of them.
        assertThat(overlapping)
                .as("refunds of other payments in flight at the PSP together with this payment's refunds")
                .isGreaterThanOrEqualTo(OTHER_PAYMENTS / 2);
        assertThat(fx.refund(first).getInteger("attempts"))
                .as("first refund executed in one attempt")
                .isEqualTo(1);
        assertThat(firstCall.answered())
                .as("the payment's second refund reaches the PSP only after its first one was answered")
                .isBeforeOrEqualTo(secondCall.received());
        for (UUID id : all) {
            assertThat(fx.pspRefundMovements(id)).as("movements of " + id).isEqualTo(1);
        }
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(3_000);
    }

    private PspRequest onlyRequest(UUID refundId) {
        List<Map<String, Object>> requests = given().baseUri(pspUrl)
                .queryParam("reference", refundId.toString())
                .get("/test/refund-requests")
                .then()
                .statusCode(200)
                .extract()
                .path("requests");
        assertThat(requests).as("PSP requests of " + refundId).hasSize(1);
        Map<String, Object> request = requests.get(0);
        return new PspRequest(
                Instant.parse((String) request.get("receivedAt")), Instant.parse((String) request.get("answeredAt")));
    }
}
