package com.payments.delivery;

import com.payments.contracts.webhooks.HostResolver;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The sender's resolver in every {@code @QuarkusTest} of this module: no name leaves the machine. IP literals are
 * their own address, {@code localhost} is 127.0.0.1, a name a test gave answers with its addresses (the current ones:
 * a test may change them between attempts, as a rebinding DNS server would), any other name does not resolve.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class FakeHostResolver extends HostResolver {
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private final Map<String, List<InetAddress>> answers = new ConcurrentHashMap<>();
    private final Map<String, Integer> asked = new ConcurrentHashMap<>();

    public FakeHostResolver() {
        super(null);
    }

    /** From now on {@code name} resolves to {@code addresses} (IP literals), in that order. */
    public void answer(String name, String... addresses) {
        answers.put(
                name,
                java.util.Arrays.stream(addresses)
                        .map(FakeHostResolver::literal)
                        .toList());
    }

    /** How many times the sender asked for {@code name}. */
    public int asked(String name) {
        return asked.getOrDefault(name, 0);
    }

    @Override
    public Uni<List<InetAddress>> resolve(String host) {
        asked.merge(host, 1, Integer::sum);
        List<InetAddress> given = answers.get(host);
        if (given != null) {
            return Uni.createFrom().item(given);
        }
        if ("localhost".equals(host)) {
            return Uni.createFrom().item(List.of(literal("127.0.0.1")));
        }
        if (IPV4.matcher(host).matches() || host.contains(":")) {
            return Uni.createFrom().item(List.of(literal(host)));
        }
        return Uni.createFrom().failure(new UnknownHostException(host));
    }

    /** An IP literal's address; InetAddress.getByName makes no lookup for one. */
    private static InetAddress literal(String address) {
        if (!IPV4.matcher(address).matches() && !address.contains(":")) {
            throw new IllegalArgumentException("not an IP literal: " + address);
        }
        try {
            return InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
