package com.payments.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.infra.PostgresTestResource;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Behind an ingress (the proxy settings the Kubernetes overlays give payments-api, k8s/validate/policy.mjs), failed
 * authentications are limited per client that the trusted proxy forwards, not per proxy: one client's bad keys do not
 * answer 429 to another client behind the same proxy. A peer that is not a trusted proxy is counted by its own address
 * whatever X-Forwarded-For it sends, so it can neither escape its limit nor use up someone else's. The trusted proxy is
 * 127.0.0.1; the untrusted peer connects from 127.0.0.2.
 */
@QuarkusTest
@TestProfile(ForwardedClientAddressTest.BehindTrustedProxy.class)
@WithTestResource(value = PostgresTestResource.class, scope = TestResourceScope.GLOBAL)
class ForwardedClientAddressTest {
    static final int MAX_FAILURES = 3;
    static final String PROXY = "127.0.0.1";
    static final String UNTRUSTED_PEER = "127.0.0.2";

    public static class BehindTrustedProxy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "payments.auth.max-failures", Integer.toString(MAX_FAILURES),
                    // one failure back every 200 s: none during the test
                    "payments.auth.failure-window", "PT10M",
                    "quarkus.http.proxy.proxy-address-forwarding", "true",
                    "quarkus.http.proxy.allow-x-forwarded", "true",
                    "quarkus.http.proxy.trusted-proxies", PROXY);
        }
    }

    @Test
    void clientsBehindTheTrustedProxyAreLimitedSeparately() {
        for (int i = 0; i < MAX_FAILURES; i++) {
            assertThat(badKey(PROXY, "203.0.113.10"))
                    .as("failure %d of client 1", i + 1)
                    .isEqualTo(401);
        }
        assertThat(badKey(PROXY, "203.0.113.10"))
                .as("client 1 over its allowance")
                .isEqualTo(429);
        assertThat(badKey(PROXY, "203.0.113.11"))
                .as("client 2 behind the same proxy keeps its own allowance")
                .isEqualTo(401);
        assertThat(badKey(PROXY, "203.0.113.10")).as("client 1 still limited").isEqualTo(429);
    }

    @Test
    void anUntrustedPeersForwardedForIsIgnored() {
        // The address of client 3, used up through the trusted proxy.
        for (int i = 0; i < MAX_FAILURES; i++) {
            assertThat(badKey(PROXY, "203.0.113.30")).isEqualTo(401);
        }
        assertThat(badKey(PROXY, "203.0.113.30")).isEqualTo(429);

        // The untrusted peer claims to be client 3: counted as itself, so not refused for client 3's failures ...
        assertThat(badKey(UNTRUSTED_PEER, "203.0.113.30"))
                .as("an untrusted peer's X-Forwarded-For does not pick the allowance")
                .isEqualTo(401);
        // ... and a new X-Forwarded-For on each request does not give it new allowances.
        for (int i = 1; i < MAX_FAILURES; i++) {
            assertThat(badKey(UNTRUSTED_PEER, "198.51.100." + i))
                    .as("failure %d of the untrusted peer", i + 1)
                    .isEqualTo(401);
        }
        assertThat(badKey(UNTRUSTED_PEER, "198.51.100.99"))
                .as("the untrusted peer over its own allowance, whatever it forwards")
                .isEqualTo(429);
    }

    private static int badKey(String peer, String forwardedFor) {
        return RawHttp.sendFrom(
                        peer,
                        RestAssured.port,
                        "GET",
                        "/v1/payments?orderId=none",
                        Map.of("Authorization", "Bearer sk_live_" + UUID.randomUUID(), "X-Forwarded-For", forwardedFor))
                .status();
    }
}
