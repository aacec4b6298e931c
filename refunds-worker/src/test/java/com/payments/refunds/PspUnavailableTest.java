package com.payments.refunds;

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
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The PSP down or not answering: the refund stays PENDING with its reservation (a timeout is never a failure) and
 * completes, with one PSP refund, once the PSP answers again.
 */
@QuarkusTest
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(value = KafkaTestResource.class, scope = TestResourceScope.GLOBAL)
@WithTestResource(
        value = PspSandboxTestResource.class,
        initArgs = @ResourceArg(name = "psp.timeout-delay", value = "3s"),
        scope = TestResourceScope.GLOBAL)
class PspUnavailableTest {
    @Inject
    Pool pool;

    @Inject
    ObjectMapper mapper;

    @ConfigProperty(name = "psp.url")
    String pspUrl;

    Fixtures fx;

    @BeforeEach
    void setUp() {
        fx = new Fixtures(pool, mapper, pspUrl);
    }

    @AfterEach
    void resetFaults() {
        fx.resetPspFaults();
    }

    @Test
    void serverErrorsKeepTheRefundPendingUntilThePspIsBack() {
        Fixtures.Captured payment = fx.capture("tok_visa", 7_000);
        UUID refundId = fx.reserve(payment, 7_000);
        fx.pspFaults("{\"errorRate\": 1.0}");

        fx.publish(fx.command(payment, refundId, 7_000));

        // Executed by the consumer, then retried by the sync at least once: still PENDING, nothing released.
        await().atMost(Fixtures.WAIT).until(() -> fx.refund(refundId).getInteger("attempts") >= 3);
        assertThat(fx.status(refundId)).isEqualTo("PENDING");
        assertThat(fx.refund(refundId).getString("last_error")).isNotBlank();
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(7_000);
        assertThat(fx.pspRefundMovements(refundId)).isZero();

        fx.resetPspFaults();
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(7_000);
        assertThat(fx.count(
                        "SELECT count(*) FROM outbox WHERE event_type = 'RefundSucceeded' AND payload->>'refundId' = $1",
                        refundId.toString()))
                .isEqualTo(1);
    }

    @Test
    void lostResponseIsResolvedByLookupWithoutASecondRefund() {
        Fixtures.Captured payment = fx.capture("tok_visa", 6_000);
        UUID refundId = fx.reserve(payment, 1_500);
        // The PSP makes the refund but answers after 3 s; the worker gives up after 1 s: outcome unknown.
        fx.pspFaults("{\"timeoutRate\": 1.0}");

        fx.publish(fx.command(payment, refundId, 1_500));

        // The sync's lookup by reference (GETs are not delayed) finds the refund the PSP made.
        await().atMost(Fixtures.WAIT).until(() -> fx.status(refundId).equals("SUCCEEDED"));
        assertThat(fx.refund(refundId).getInteger("attempts")).isGreaterThanOrEqualTo(2);
        assertThat(fx.refund(refundId).getString("psp_reference")).startsWith("re_");
        assertThat(fx.pspRefundMovements(refundId)).isEqualTo(1);
        assertThat(fx.refundedAmount(payment.paymentId())).isEqualTo(1_500);
        assertThat(fx.count(
                        "SELECT count(*) FROM ledger_transactions WHERE kind = 'REFUND' AND reference = $1",
                        refundId.toString()))
                .isEqualTo(1);
    }
}
