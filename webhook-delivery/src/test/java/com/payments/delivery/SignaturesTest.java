package com.payments.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SignaturesTest {

    /** The Standard Webhooks specification's example (standard-webhooks spec, "Signature scheme"). */
    @Test
    void matchesTheStandardWebhooksExample() {
        assertThat(Signatures.header(
                        List.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                        "msg_p5jXN8AQM9LWM0D4loKWxJek",
                        1614265330,
                        "{\"test\": 2432232314}"))
                .isEqualTo("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    @Test
    void oneSpaceSeparatedEntryPerSecret() throws Exception {
        String a = Webhooks.newSecret();
        String b = Webhooks.newSecret();
        assertThat(Signatures.header(List.of(a, b), "id", 1, "{}"))
                .isEqualTo(DeliveryTest.hmac(a, "id", "1", "{}") + " " + DeliveryTest.hmac(b, "id", "1", "{}"));
    }
}
