package com.payments.contracts.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

// Literal addresses only: InetAddress.getByName of a literal parses it and never asks DNS or connects.
class WebhookUrlPolicyTest {
    private final WebhookUrlPolicy production = new WebhookUrlPolicy(false, false);

    @ParameterizedTest
    @ValueSource(
            strings = {
                "127.0.0.1",
                "127.9.9.9",
                "::1",
                "0.0.0.0",
                "::",
                "10.0.0.1",
                "172.16.0.1",
                "172.31.255.255",
                "192.168.1.1",
                "169.254.169.254",
                "169.254.0.1",
                "fe80::1",
                "fc00::1",
                "fd00:ec2::254",
                "100.64.0.1",
                "100.127.255.255",
                "0.1.2.3",
                "192.0.0.8",
                "198.18.0.1",
                "224.0.0.1",
                "ff02::1",
                "240.0.0.1",
                "255.255.255.255",
                "::ffff:10.0.0.1",
                "::ffff:169.254.169.254",
                "::10.0.0.1",
                "64:ff9b::a00:1",
                "64:ff9b::7f00:1",
                "2002:a00:1::1", // 6to4 of 10.0.0.1
                "2002:5db8:d822::1", // 6to4 of a public address: refused too (a relay decides where it goes)
                "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1
                "100::1" // discard-only
            })
    void refusesEveryNonPublicAddress(String literal) throws UnknownHostException {
        assertThat(production.checkAddress(InetAddress.getByName(literal))).isPresent();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:1.1.1.1"})
    void acceptsPublicAddresses(String literal) throws UnknownHostException {
        assertThat(production.checkAddress(InetAddress.getByName(literal))).isEmpty();
    }

    @Test
    void loopbackOnlyWhenAllowedAndPrivateNeverEven() throws UnknownHostException {
        var local = new WebhookUrlPolicy(true, true);
        assertThat(local.checkAddress(InetAddress.getByName("127.0.0.1"))).isEmpty();
        assertThat(local.checkAddress(InetAddress.getByName("::1"))).isEmpty();
        assertThat(local.checkAddress(InetAddress.getByName("10.0.0.1"))).isPresent();
        assertThat(local.checkAddress(InetAddress.getByName("::ffff:192.168.0.1")))
                .isPresent();
    }

    @Test
    void oneBadAddressRefusesTheHost() throws UnknownHostException {
        var addresses = List.of(InetAddress.getByName("93.184.216.34"), InetAddress.getByName("10.1.2.3"));
        assertThat(production.checkAddresses("shop.example", addresses))
                .hasValueSatisfying(p -> assertThat(p).contains("shop.example").contains("10.1.2.3"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "", "http://shop.example/hook", "ftp://shop.example/x", "https://user:pw@shop.example/x",
                "https://shop.example/x#frag", "https:///nohost", "not a url", "/relative"
            })
    void refusesBadUrlsInProduction(String url) {
        assertThat(production.checkUrl(url)).isPresent();
    }

    @Test
    void acceptsHttpsAndHttpOnlyWhenAllowed() {
        assertThat(production.checkUrl("https://shop.example:8443/hooks?x=1")).isEmpty();
        assertThat(new WebhookUrlPolicy(true, false).checkUrl("http://shop.example/hooks"))
                .isEmpty();
        assertThat(production.checkUrl("https://x.example/" + "a".repeat(2048))).isPresent();
    }
}
