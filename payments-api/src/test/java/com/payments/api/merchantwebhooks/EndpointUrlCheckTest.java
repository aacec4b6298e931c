package com.payments.api.merchantwebhooks;

import static org.assertj.core.api.Assertions.assertThat;

import com.payments.api.common.Refusal;
import com.payments.contracts.webhooks.HostResolver;
import com.payments.contracts.webhooks.WebhookUrlPolicy;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The registration's SSRF check with the production settings (no http, no loopback). Only literals and
 * {@code localhost} reach the system resolver; other names are answered by a resolver of the test.
 */
class EndpointUrlCheckTest {
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.closeAndAwait();
    }

    @Test
    void loopbackIsRefusedUnlessAllowed() {
        EndpointUrlCheck production = new EndpointUrlCheck(new WebhookUrlPolicy(false, false), new HostResolver(vertx));
        for (String url : List.of(
                "https://127.0.0.1/hook", "https://127.8.9.10/hook", "https://localhost/hook", "https://[::1]/hook")) {
            assertThat(refusal(production, url).code()).as(url).isEqualTo("webhook_url_forbidden");
        }
        EndpointUrlCheck local = new EndpointUrlCheck(new WebhookUrlPolicy(true, true), new HostResolver(vertx));
        for (String url : List.of("https://127.0.0.1/hook", "http://localhost:21001/hook", "https://[::1]/hook")) {
            assertThat(check(local, url)).as(url).isNull();
        }
        assertThat(refusal(production, "http://93.184.215.14/hook").code()).isEqualTo("invalid_url");
    }

    @Test
    void privateLinkLocalAndEmbeddedAddressesAreRefused() {
        EndpointUrlCheck check = new EndpointUrlCheck(new WebhookUrlPolicy(false, false), new HostResolver(vertx));
        for (String url : List.of(
                "https://10.0.0.1/hook",
                "https://172.16.5.4/hook",
                "https://192.168.1.1:8443/hook",
                "https://169.254.169.254/latest/meta-data",
                "https://100.64.0.1/hook",
                "https://0.0.0.0/hook",
                "https://[::]/hook",
                "https://[fd00::1]/hook",
                "https://[fe80::1]/hook",
                "https://[::ffff:10.0.0.1]/hook",
                "https://[::ffff:127.0.0.1]/hook",
                "https://[64:ff9b::a9fe:a9fe]/hook")) {
            assertThat(refusal(check, url).code()).as(url).isEqualTo("webhook_url_forbidden");
        }
        assertThat(check(check, "https://93.184.215.14/hook")).isNull();
        assertThat(check(check, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook"))
                .isNull();
    }

    @Test
    void aNameIsRefusedWhenAnyOfItsAddressesIsAndWhenItDoesNotResolve() throws Exception {
        Map<String, List<InetAddress>> names = Map.of(
                "internal.example.test",
                List.of(InetAddress.getByName("93.184.215.14"), InetAddress.getByName("10.1.2.3")),
                "public.example.test",
                List.of(InetAddress.getByName("93.184.215.14")));
        HostResolver fake = new HostResolver(vertx) {
            @Override
            public Uni<List<InetAddress>> resolve(String host) {
                List<InetAddress> addresses = names.get(host);
                return addresses == null
                        ? Uni.createFrom().failure(new java.net.UnknownHostException(host))
                        : Uni.createFrom().item(addresses);
            }
        };
        EndpointUrlCheck check = new EndpointUrlCheck(new WebhookUrlPolicy(false, false), fake);
        Refusal refused = refusal(check, "https://internal.example.test/hook");
        assertThat(refused.code()).isEqualTo("webhook_url_forbidden");
        assertThat(refused.detail()).contains("a private address").doesNotContain("internal.example.test");
        assertThat(check(check, "https://public.example.test/hook")).isNull();
        assertThat(refusal(check, "https://nowhere.example.test/hook").code()).isEqualTo("webhook_url_unresolvable");
    }

    private static Refusal refusal(EndpointUrlCheck check, String url) {
        Throwable failure = check(check, url);
        assertThat(failure).as(url).isInstanceOf(Refusal.class);
        return (Refusal) failure;
    }

    /** The check's failure, null when it passed. */
    private static Throwable check(EndpointUrlCheck check, String url) {
        try {
            check.check(url).await().atMost(Duration.ofSeconds(10));
            return null;
        } catch (Throwable failure) {
            return failure;
        }
    }
}
