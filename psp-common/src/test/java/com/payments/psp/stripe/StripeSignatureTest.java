package com.payments.psp.stripe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.payments.psp.port.WebhookRejectedException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** Stripe-Signature as Stripe documents it: t, one or more v1, HMAC-SHA256 over "t.body", a tolerance. */
class StripeSignatureTest {

    static final Instant NOW = Instant.parse("2031-03-10T10:00:00Z");
    static final byte[] BODY = "{\"id\":\"evt_1\",\"object\":\"event\"}".getBytes(StandardCharsets.UTF_8);

    static String v1(String secret, long t, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(mac.doFinal(body));
    }

    static StripeSignature verifier(String... secrets) {
        return new StripeSignature(List.of(secrets), Duration.ofMinutes(5), Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @Test
    void acceptsAnyV1OfAnyOfOurSecrets() throws Exception {
        long t = NOW.getEpochSecond() - 60;
        String header =
                "t=" + t + ",v1=" + v1("whsec_new", t, BODY) + ",v1=" + v1("whsec_old", t, BODY) + ",v0=ignored";
        verifier("whsec_new").verify(header, BODY);
        verifier("whsec_old").verify(header, BODY);
        verifier("whsec_other", "whsec_old").verify(header, BODY);
        assertThatThrownBy(() -> verifier("whsec_other").verify(header, BODY))
                .isInstanceOf(WebhookRejectedException.class)
                .hasMessageContaining("no Stripe-Signature v1 matches");
    }

    @Test
    void rejectsTamperedBodiesStaleOrMissingTimestampsAndMissingSignatures() throws Exception {
        long t = NOW.getEpochSecond();
        String header = "t=" + t + ",v1=" + v1("whsec_a", t, BODY);
        byte[] tampered = "{\"id\":\"evt_2\",\"object\":\"event\"}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> verifier("whsec_a").verify(header, tampered))
                .isInstanceOf(WebhookRejectedException.class);
        long stale = t - 301;
        assertThatThrownBy(() -> verifier("whsec_a").verify("t=" + stale + ",v1=" + v1("whsec_a", stale, BODY), BODY))
                .hasMessageContaining("tolerance");
        long edge = t - 300;
        verifier("whsec_a").verify("t=" + edge + ",v1=" + v1("whsec_a", edge, BODY), BODY);
        assertThatThrownBy(() -> verifier("whsec_a").verify("v1=" + v1("whsec_a", t, BODY), BODY))
                .hasMessageContaining("no timestamp");
        assertThatThrownBy(() -> verifier("whsec_a").verify("t=" + t, BODY)).hasMessageContaining("no v1");
        assertThatThrownBy(() -> verifier("whsec_a").verify(null, BODY)).hasMessageContaining("missing");
        assertThatThrownBy(() -> verifier().verify(header, BODY)).hasMessageContaining("no webhook secret");
    }

    @Test
    void settingsNeverShowTheKeyOrTheSecrets() {
        StripeSettings settings = StripeSettings.defaults(
                URI.create("https://api.stripe.com"), "sk_test_secretvalue", List.of("whsec_x"));
        assertThat(settings.toString()).doesNotContain("sk_test_secretvalue").doesNotContain("whsec_x");
        assertThat(settings.apiVersion()).isEqualTo(StripeSettings.PINNED_API_VERSION);
        assertThatThrownBy(() -> StripeSettings.defaults(URI.create("https://api.stripe.com"), " ", List.of()))
                .hasMessageContaining("STRIPE_API_KEY");
    }
}
