package com.payments.refunds.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.psp.PspConcurrencyLimit;
import com.payments.psp.PspLimitSettings;
import com.payments.psp.port.PspPort;
import com.payments.psp.port.RefundResult;
import com.payments.refunds.Refund;
import com.payments.refunds.service.RefundsMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The adapters answer a 5xx or a lost connection with an UNKNOWN result instead of a failure: that is a PSP error
 * and cuts the limit; a failed refund or a case for an operator is an answer and does not.
 */
class PspClientLimitTest {

    private static int limitAfter(RefundResult answer) {
        return limitAfter(Uni.createFrom().item(answer));
    }

    private static int limitAfter(Uni<RefundResult> answer) {
        PspConcurrencyLimit limit = new PspConcurrencyLimit(
                new PspLimitSettings(100, 20, 256, 512, Duration.ofMinutes(1)), new SimpleMeterRegistry(), "test.psp");
        PspPort port = (PspPort) Proxy.newProxyInstance(
                PspPort.class.getClassLoader(), new Class<?>[] {PspPort.class}, (proxy, method, args) -> {
                    if (method.getName().equals("refund")) {
                        return answer;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        PspClient client =
                new PspClient(port, limit, new RefundsMetrics(new SimpleMeterRegistry()), Duration.ofMillis(500));
        Refund refund =
                new Refund(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID(), 500, "EUR", "PENDING", 0, "ch_1");
        client.refund(refund).onFailure().recoverWithNull().await().atMost(Duration.ofSeconds(5));
        assertThat(limit.inFlight()).isZero();
        return limit.limit();
    }

    @Test
    void aServerErrorOrLostConnectionCutsTheLimit() {
        assertThat(limitAfter(RefundResult.unknown(null, "http_503"))).isEqualTo(90);
    }

    /** The call's own timeout ends it inside the limit: a failure, which cuts (a cancelled call would not). */
    @Test
    void aCallThePspDoesNotAnswerCutsTheLimit() {
        assertThat(limitAfter(Uni.createFrom().nothing())).isEqualTo(90);
    }

    @Test
    void definiteAnswersDoNotCutIt() {
        assertThat(limitAfter(RefundResult.of(RefundResult.Status.SUCCEEDED, "re_1", null)))
                .isGreaterThanOrEqualTo(100);
        assertThat(limitAfter(RefundResult.of(RefundResult.Status.FAILED, null, "psp_refund_failed")))
                .isGreaterThanOrEqualTo(100);
        assertThat(limitAfter(RefundResult.attention(null, "HTTP 422 amount_too_large")))
                .isGreaterThanOrEqualTo(100);
    }
}
