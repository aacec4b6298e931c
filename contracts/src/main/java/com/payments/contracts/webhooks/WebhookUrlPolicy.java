package com.payments.contracts.webhooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * Which merchant webhook URLs we send to (issue 24, docs/merchant-webhooks.md "SSRF"). payments-api checks a URL and the
 * addresses its host resolves to when the endpoint is registered; webhook-delivery checks the addresses again right
 * before it connects, and connects to the address it checked, so a DNS answer that changes in between (rebinding)
 * cannot point a delivery into our network. Redirects are never followed.
 *
 * @param allowHttp plain http (local runs only; production is https)
 * @param allowLoopback 127.0.0.0/8 and ::1 (local runs and tests only)
 */
public record WebhookUrlPolicy(boolean allowHttp, boolean allowLoopback) {

    public static final int MAX_URL_LENGTH = 2048;

    /** The URL's problem, if any, before any name is resolved. */
    public Optional<String> checkUrl(String url) {
        if (url == null || url.isBlank()) {
            return Optional.of("url is required");
        }
        if (url.length() > MAX_URL_LENGTH) {
            return Optional.of("url is longer than " + MAX_URL_LENGTH + " characters");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            return Optional.of("url is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(allowHttp && scheme.equals("http"))) {
            return Optional.of(allowHttp ? "url must be http or https" : "url must be https");
        }
        if (uri.getRawUserInfo() != null) {
            return Optional.of("url must not contain credentials");
        }
        if (uri.getRawFragment() != null) {
            return Optional.of("url must not contain a fragment");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            return Optional.of("url must name a host");
        }
        return Optional.empty();
    }

    /** The reason an address may not be sent to, if it may not. */
    public Optional<String> checkAddress(InetAddress address) {
        if (address.isLoopbackAddress()) {
            return allowLoopback ? Optional.empty() : Optional.of("a loopback address");
        }
        if (address instanceof Inet6Address v6) {
            byte[] b = v6.getAddress();
            Optional<Inet4Address> embedded = embeddedIpv4(b);
            if (embedded.isPresent()) {
                return checkAddress(embedded.get());
            }
            if ((b[0] & 0xfe) == 0xfc) {
                return Optional.of("a private address (fc00::/7)");
            }
            // Transition addresses reach an IPv4 address through a relay we do not choose; no receiver needs one.
            if ((b[0] & 0xff) == 0x20 && (b[1] & 0xff) == 0x02) {
                return Optional.of("a 6to4 address (2002::/16)");
            }
            if ((b[0] & 0xff) == 0x20 && (b[1] & 0xff) == 0x01 && b[2] == 0 && b[3] == 0) {
                return Optional.of("a Teredo address (2001::/32)");
            }
            if ((b[0] & 0xff) == 0x01
                    && b[1] == 0
                    && b[2] == 0
                    && b[3] == 0
                    && b[4] == 0
                    && b[5] == 0
                    && b[6] == 0
                    && b[7] == 0) {
                return Optional.of("a discard-only address (100::/64)");
            }
        }
        if (address.isAnyLocalAddress()) {
            return Optional.of("an unspecified address");
        }
        if (address.isLinkLocalAddress()) {
            return Optional.of("a link-local or metadata address");
        }
        if (address.isSiteLocalAddress()) {
            return Optional.of("a private address");
        }
        if (address.isMulticastAddress()) {
            return Optional.of("a multicast address");
        }
        if (address instanceof Inet4Address) {
            int a = address.getAddress()[0] & 0xff;
            int b = address.getAddress()[1] & 0xff;
            int c = address.getAddress()[2] & 0xff;
            if (a == 0) return Optional.of("a reserved address (0.0.0.0/8)");
            if (a == 100 && b >= 64 && b <= 127) return Optional.of("a shared address (100.64.0.0/10)");
            if (a == 192 && b == 0 && c == 0) return Optional.of("a reserved address (192.0.0.0/24)");
            if (a == 198 && (b == 18 || b == 19)) return Optional.of("a reserved address (198.18.0.0/15)");
            if (a >= 240) return Optional.of("a reserved address (240.0.0.0/4)");
        }
        return Optional.empty();
    }

    /** The first refused address of a host's resolution: one bad answer refuses the host. */
    public Optional<String> checkAddresses(String host, Iterable<InetAddress> addresses) {
        for (InetAddress address : addresses) {
            Optional<String> problem = checkAddress(address);
            if (problem.isPresent()) {
                return Optional.of(host + " resolves to " + problem.get() + " (" + address.getHostAddress() + ")");
            }
        }
        return Optional.empty();
    }

    /** IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses. */
    private static Optional<Inet4Address> embeddedIpv4(byte[] b) {
        boolean zeros80 = true;
        for (int i = 0; i < 10; i++) {
            zeros80 &= b[i] == 0;
        }
        boolean mapped = zeros80 && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
        boolean compatible = zeros80 && b[10] == 0 && b[11] == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0);
        boolean nat64 =
                (b[0] & 0xff) == 0x00 && (b[1] & 0xff) == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b;
        for (int i = 4; nat64 && i < 12; i++) {
            nat64 = b[i] == 0;
        }
        if (!mapped && !compatible && !nat64) {
            return Optional.empty();
        }
        try {
            return Optional.of((Inet4Address) InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]}));
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
