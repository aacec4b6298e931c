package com.payments.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The receiver's verifier against the vector of the Standard Webhooks specification (docs/merchant-webhooks.md). */
class WebhookReceiverTest {
    private static final byte[] KEY = WebhookReceiver.key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    private static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    private static final String TIMESTAMP = "1614265330";
    private static final byte[] BODY = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
    private static final String SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    private static final Instant SIGNED = Instant.ofEpochSecond(1614265330);

    @Test
    void acceptsTheSpecificationsVectorAlsoAmongOtherEntries() {
        assertThat(WebhookReceiver.verify(KEY, ID, TIMESTAMP, SIGNATURE, BODY, SIGNED.plusSeconds(299)))
                .isTrue();
        assertThat(WebhookReceiver.verify(KEY, ID, TIMESTAMP, "v2,abc v1,bm90IGl0 " + SIGNATURE, BODY, SIGNED))
                .isTrue();
    }

    @Test
    void refusesAnotherBodyIdKeyOrAStaleTimestamp() {
        byte[] otherBody = "{\"test\":2432232314}".getBytes(StandardCharsets.UTF_8);
        assertThat(WebhookReceiver.verify(KEY, ID, TIMESTAMP, SIGNATURE, otherBody, SIGNED))
                .isFalse();
        assertThat(WebhookReceiver.verify(KEY, ID + "x", TIMESTAMP, SIGNATURE, BODY, SIGNED))
                .isFalse();
        assertThat(WebhookReceiver.verify(
                        WebhookReceiver.key("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
                        ID,
                        TIMESTAMP,
                        SIGNATURE,
                        BODY,
                        SIGNED))
                .isFalse();
        assertThat(WebhookReceiver.verify(KEY, ID, TIMESTAMP, SIGNATURE, BODY, SIGNED.plusSeconds(301)))
                .isFalse();
        assertThat(WebhookReceiver.verify(KEY, ID, TIMESTAMP, null, BODY, SIGNED))
                .isFalse();
        assertThat(WebhookReceiver.verify(null, ID, TIMESTAMP, SIGNATURE, BODY, SIGNED))
                .isFalse();
    }
}
